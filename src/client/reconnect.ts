// When our client may dial a broker again (one per broker slot of the Cluster, on the client's
// thread): after a failed attempt, or after an open connection is lost, the next attempt waits a
// full-jitter delay below an exponential cap, Kafka's reconnect.backoff.ms 50 ms growing to
// reconnect.backoff.max.ms 1 s by default. A lost connection counts as a failure because a fleet
// loses its connections to a broker at the same moment (the broker stopped, its leaders moved):
// redialling at once would bring every client back in lockstep, and each failure doubles the
// window the fleet spreads over. Pure; the clock is passed in and the random source injected.
import { fullJitterDelay, type BackoffOptions } from '../protocol/backoff.js';

/** Kafka's reconnect.backoff.ms and reconnect.backoff.max.ms defaults. */
export const RECONNECT_BACKOFF: Required<BackoffOptions> = { baseMs: 50, maxMs: 1000 };

export class ReconnectBackoff {
  private failures = 0;
  private notBefore = 0;

  constructor(
    private readonly options: BackoffOptions = RECONNECT_BACKOFF,
    private readonly random: () => number = () => Math.random(),
  ) {}

  /** An attempt failed, or an open connection was lost, at `now`. */
  failed(now: number): void {
    this.notBefore = now + fullJitterDelay(this.failures, this.options, this.random);
    this.failures++;
  }

  connected(): void {
    this.failures = 0;
  }

  /** How long an attempt at `now` must still wait. */
  waitMs(now: number): number {
    return Math.max(0, this.notBefore - now);
  }
}
