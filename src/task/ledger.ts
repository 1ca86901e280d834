/**
 * What a run has created in the cluster and not yet deleted. berth deletes all of it before it exits, except
 * at a second interrupt: it then exits at once and names what it leaves to the objects' deadline and `berth gc`.
 */
export class Ledger {
  /** `kind/name` by namespace */
  private readonly live = new Map<string, Set<string>>();

  add(namespace: string, kind: string, name: string): void {
    const names = this.live.get(namespace) ?? new Set<string>();
    names.add(`${kind}/${name}`);
    this.live.set(namespace, names);
  }

  remove(namespace: string, kind: string, name: string): void {
    this.live.get(namespace)?.delete(`${kind}/${name}`);
  }

  /** `pod/a, secret/b in namespace ci`; empty when nothing is left. */
  describe(): string {
    return [...this.live]
      .filter(([, names]) => names.size > 0)
      .map(([ns, names]) => `${[...names].sort().join(', ')} in namespace ${ns}`)
      .join('; ');
  }
}
