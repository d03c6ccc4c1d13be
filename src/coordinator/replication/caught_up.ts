// Kafka's lastCaughtUpTime rule (Replica.scala), shared by the metadata quorum's progress tracker
// and the partition leader: the latest instant at which a follower held everything the leader held
// at that instant. A follower under a steady stream of small appends never equals the moving log
// end, yet counts as caught up as long as each fetch reaches where the leader ended at the
// previous one. Pure; any thread. Times are whatever clock the caller uses (ms or ticks).

/** What the rule remembers about a follower between its fetches. */
export interface FetchHistory {
  /** -1 before any. */
  readonly lastCaughtUp: number;
  readonly lastFetch: number;
  /** The leader's log end when the previous fetch arrived, -1 before any. */
  readonly leaderEndAtLastFetch: number;
}

/**
 * The follower's lastCaughtUp after a fetch at `fetchOffset` arriving at `now` while the leader's
 * log ends at `leaderEnd`: now when it has everything; the previous fetch's time when it has what
 * the leader had then; unchanged otherwise.
 */
export function caughtUpAfterFetch(history: FetchHistory, fetchOffset: number, leaderEnd: number, now: number): number {
  if (fetchOffset >= leaderEnd) return Math.max(history.lastCaughtUp, now);
  if (history.leaderEndAtLastFetch >= 0 && fetchOffset >= history.leaderEndAtLastFetch) {
    return Math.max(history.lastCaughtUp, history.lastFetch);
  }
  return history.lastCaughtUp;
}
