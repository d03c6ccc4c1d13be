// A sleep that can be cut short (a latch, unlike the consumer's multi-waiter Waker: a wake with
// nobody asleep is kept for the next sleep): the producer's send loop sleeps until its next deadline or until
// an append, an answer or a reconnect wakes it. A wake while the loop is running is remembered, so
// the next sleep returns at once and no event is lost. Runs on the producer's thread.

export class WakeLatch {
  private resolve: (() => void) | null = null;
  private timer: NodeJS.Timeout | undefined;
  private pending = false;

  wake(): void {
    const resolve = this.resolve;
    if (resolve === null) {
      this.pending = true;
      return;
    }
    this.resolve = null;
    clearTimeout(this.timer);
    resolve();
  }

  /** Resolves after `ms` (never for Infinity) or at the next wake; 0 yields to I/O first. */
  sleep(ms: number): Promise<void> {
    if (this.pending) {
      this.pending = false;
      return new Promise((resolve) => setImmediate(resolve));
    }
    return new Promise((resolve) => {
      this.resolve = resolve;
      if (ms === Infinity) return;
      this.timer = setTimeout(() => {
        this.resolve = null;
        resolve();
      }, ms);
    });
  }
}
