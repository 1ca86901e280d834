/**
 * Calls serialized per key: the next call for a key starts when the previous one has settled. Docker
 * serializes a container's lifecycle calls the same way (its container lock), so ten parallel `start`s of
 * one container make one pod, and the other nine see it started.
 */
export class Serial {
  private readonly tails = new Map<string, Promise<unknown>>();

  run<T>(key: string, call: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    const next = previous.then(call, call);
    const tail = next.catch(() => undefined);
    this.tails.set(key, tail);
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return next;
  }
}
