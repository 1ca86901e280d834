/**
 * What a run has created in the cluster and not yet deleted. berth deletes all of it before it exits, except
 * at a second interrupt: it then exits at once and names what it leaves to the objects' deadline and `berth gc`.
 */
export class Ledger {
  /** `kind/name` by namespace, and whether its deletion was asked (and not yet answered) */
  private readonly live = new Map<string, Map<string, boolean>>();

  add(namespace: string, kind: string, name: string): void {
    const names = this.live.get(namespace) ?? new Map<string, boolean>();
    names.set(`${kind}/${name}`, false);
    this.live.set(namespace, names);
  }

  /** Its deletion was asked: it may be gone a moment later, or not (the answer is lost when berth exits). */
  deleting(namespace: string, kind: string, name: string): void {
    const names = this.live.get(namespace);
    if (names?.has(`${kind}/${name}`)) names.set(`${kind}/${name}`, true);
  }

  remove(namespace: string, kind: string, name: string): void {
    this.live.get(namespace)?.delete(`${kind}/${name}`);
  }

  /** `pod/a (deletion asked), secret/b in namespace ci`; empty when nothing is left. */
  describe(): string {
    return [...this.live]
      .filter(([, names]) => names.size > 0)
      .map(
        ([ns, names]) =>
          `${[...names]
            .sort(([a], [b]) => a.localeCompare(b))
            .map(([n, asked]) => (asked ? `${n} (deletion asked)` : n))
            .join(', ')} in namespace ${ns}`,
      )
      .join('; ');
  }
}
