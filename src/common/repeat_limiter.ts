// Rate limit for repeated log lines of one kind (e.g. a full disk failing every group commit):
// the first occurrence of a kind is logged at once, later ones at most once per interval, each
// logged line carrying how many were suppressed since the previous one. Pure; the clock is
// injected. Used on whichever thread logs (the shard workers).
// Invariant: every occurrence is either logged or counted in the next logged line's `suppressed`
// (unless its kind is evicted first); at most maxKinds kinds are remembered.

/** What to do with one occurrence: log it (with the count suppressed before it) or not. */
export type RepeatVerdict = { log: true; suppressed: number } | { log: false };

interface KindState {
  lastLoggedAt: number;
  suppressed: number;
}

export class RepeatLimiter {
  private readonly kinds = new Map<string, KindState>();

  constructor(
    private readonly intervalMs: number,
    private readonly now: () => number,
    private readonly maxKinds: number,
  ) {
    if (!(intervalMs >= 0) || !(maxKinds >= 1)) throw new RangeError('RepeatLimiter: intervalMs >= 0 and maxKinds >= 1');
  }

  offer(kind: string): RepeatVerdict {
    const t = this.now();
    const state = this.kinds.get(kind);
    if (state === undefined) {
      // The oldest kind is forgotten first; its next occurrence is simply logged at once.
      if (this.kinds.size >= this.maxKinds) this.kinds.delete(this.kinds.keys().next().value!);
      this.kinds.set(kind, { lastLoggedAt: t, suppressed: 0 });
      return { log: true, suppressed: 0 };
    }
    if (t - state.lastLoggedAt < this.intervalMs) {
      state.suppressed++;
      return { log: false };
    }
    const suppressed = state.suppressed;
    state.lastLoggedAt = t;
    state.suppressed = 0;
    return { log: true, suppressed };
  }
}
