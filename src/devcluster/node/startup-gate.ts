// Pod start-up comes first: on a small machine every podman process competes for the same CPUs and for
// podman's own locks, so housekeeping (refilling the sandbox pool, removing finished pods' sandboxes)
// waits until no pod is starting. A pod stuck before it starts (image missing, config error) must not hold
// housekeeping up for long: after maxWaitMs it goes ahead anyway.
export class StartupGate {
  private starting = 0;
  private waiters: (() => void)[] = [];

  constructor(private readonly maxWaitMs = 3000) {}

  /** a pod starts; call the returned function (once or more) when it has started or given up */
  begin(): () => void {
    this.starting++;
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      this.starting--;
      if (this.starting === 0) this.release();
    };
  }

  get busy(): boolean {
    return this.starting > 0;
  }

  /** resolves when no pod is starting, or after maxWaitMs */
  idle(): Promise<void> {
    if (this.starting === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(done, this.maxWaitMs);
      timer.unref();
      function done(): void {
        clearTimeout(timer);
        resolve();
      }
      this.waiters.push(done);
    });
  }

  private release(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }
}
