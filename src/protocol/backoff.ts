// Reconnect and retry delays (Kafka's reconnect.backoff.ms / reconnect.backoff.max.ms), shared by
// our client and the quorum transport between controllers: exponential backoff with full jitter
// (a uniformly random delay below the exponential cap), so many peers that lost the same broker
// at the same moment do not reconnect in lockstep. Pure; the random source is injected for tests.

export interface BackoffOptions {
  /** Cap of the first attempt's delay; default 100 ms (Kafka's reconnect.backoff.ms). */
  baseMs?: number;
  /** Largest cap; default 10 s (Kafka's reconnect.backoff.max.ms). */
  maxMs?: number;
}

/** Delay before retry number `attempt` (0 = first retry): uniform in [0, min(max, base·2^attempt)). */
export function fullJitterDelay(attempt: number, options: BackoffOptions = {}, random: () => number = Math.random): number {
  const base = options.baseMs ?? 100;
  const max = options.maxMs ?? 10_000;
  // 2^30 already exceeds any sane cap; clamping the exponent keeps the product finite.
  const cap = Math.min(max, base * 2 ** Math.min(Math.max(attempt, 0), 30));
  return Math.floor(random() * cap);
}

