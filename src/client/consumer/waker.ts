// A bounded wait that can be cut short: the consumer's loops sleep on it (heartbeat intervals,
// a poll with nothing assigned) and are woken when something they wait for changes or the
// consumer closes. Runs on the consumer's thread.
// Invariants: every wait ends by its timeout at the latest; a waiter is removed from the set as
// soon as it ends, so the set holds only live waits (one per loop or pending poll).

export class Waker {
  private readonly waiters = new Set<() => void>();

  /** Resolves after `ms`, on notify(), or when `signal` aborts, whichever comes first. Never rejects. */
  wait(ms: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted === true) return Promise.resolve();
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        this.waiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, Math.max(0, ms));
      signal?.addEventListener('abort', done, { once: true });
      this.waiters.add(done);
    });
  }

  /** Ends every current wait. */
  notify(): void {
    for (const done of [...this.waiters]) done();
  }
}
