// A periodic task that stops waking its thread while it has nothing to do (any thread; one timer).
// Each run reports whether time alone can still change something (`true`: keep ticking); after a
// run that says no, the ticker parks, and poke() (called by whatever may have given it work again)
// starts it again with the first run one period later. So while anything needs ticks the runs are
// exactly those of a fixed interval; an idle thread is not woken at all. Every wake-up of a
// sleeping thread costs it 100 us or more of CPU on a busy VM (issue 16: an idle broker's budget).
// Invariant: from a poke() on, a run happens within `periodMs` (the timer running on time), until
// a run returns false.

/** Where the ticker takes its timer; injectable so tests can drive time by hand. */
export interface TickerTimers {
  /** Calls `fn` every `ms` until the returned stop function is called. */
  every(ms: number, fn: () => void): () => void;
}

export const REAL_TICKER_TIMERS: TickerTimers = {
  every: (ms, fn) => {
    const timer = setInterval(fn, ms);
    // A ticker never keeps its thread alive on its own.
    timer.unref();
    return () => clearInterval(timer);
  },
};

export class ParkingTicker {
  private stop: (() => void) | null = null;
  private closed = false;

  constructor(
    private readonly periodMs: number,
    private readonly run: () => boolean,
    private readonly timers: TickerTimers = REAL_TICKER_TIMERS,
  ) {}

  /** Whether the timer is armed (tests, introspection). */
  get ticking(): boolean {
    return this.stop !== null;
  }

  /** Something may need ticks again: make sure a run is at most one period away. */
  poke(): void {
    if (this.closed || this.stop !== null) return;
    this.stop = this.timers.every(this.periodMs, this.tick);
  }

  close(): void {
    this.closed = true;
    this.park();
  }

  private readonly tick = (): void => {
    if (!this.run()) this.park();
  };

  private park(): void {
    this.stop?.();
    this.stop = null;
  }
}
