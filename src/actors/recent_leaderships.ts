// The partitions this broker began to lead in the last few seconds, with their replica sets (main
// thread; the partition router owns one). A failover hands leaderships to a broker whose followers
// are often already fetching from it for other partitions, their one Fetch parked here for up to
// replica.fetch.wait.max.ms (500 ms): a follower that learns of the new leader only adds the
// partition to its next Fetch, so until the parked one returns, nothing the new leader appends for
// that partition can reach the second replica, and acks=all stalls. Two rules close the gap:
// - when a leadership begins, the parked Fetches of its replicas' fetchers are answered at once
//   (the router releases them), so the next one can carry the new partition;
// - for a while after, a follower's Fetch that leaves out a partition it replicates here (it sent
//   it before it learned of the change) parks only briefly, not for its whole max wait.
// Pure: the clock is passed in. Bounded: one entry per partition handle of this broker, dropped
// after WINDOW_MS, and at most MAX_ENTRIES (the oldest go first).

/** How long after a leadership begins its followers' Fetches that leave it out park only briefly. */
export const RECENT_LEADERSHIP_WINDOW_MS = 3_000;
/** The max wait of such a Fetch: long enough not to spin, short beside the 500 ms default. */
export const CATCH_UP_FETCH_WAIT_MS = 20;
const MAX_ENTRIES = 65_536;

interface Leadership {
  /** The other replicas' broker ids. */
  readonly followers: readonly number[];
  readonly since: number;
}

export class RecentLeaderships {
  /** Handle -> when it began to lead here; Map order is insertion order, so the oldest come first. */
  private readonly byHandle = new Map<number, Leadership>();

  get size(): number {
    return this.byHandle.size;
  }

  /** Partition `handle` began to lead here at `now`, replicated by `followers` (the other replicas' broker ids). */
  began(handle: number, followers: readonly number[], now: number): void {
    this.expire(now);
    this.byHandle.delete(handle);
    if (this.byHandle.size >= MAX_ENTRIES) {
      const oldest = this.byHandle.keys().next();
      if (oldest.done !== true) this.byHandle.delete(oldest.value);
    }
    this.byHandle.set(handle, { followers, since: now });
  }

  /** Partition `handle` stopped leading here (or closed). */
  ended(handle: number): void {
    this.byHandle.delete(handle);
  }

  /** The max wait for follower `replicaId`'s Fetch of `asked` handles: shortened if it leaves out a recent leadership it replicates. */
  maxWaitFor(replicaId: number, asked: ReadonlySet<number>, maxWaitMs: number, now: number): number {
    if (replicaId < 0 || this.byHandle.size === 0 || maxWaitMs <= CATCH_UP_FETCH_WAIT_MS) return maxWaitMs;
    this.expire(now);
    for (const [handle, l] of this.byHandle) {
      if (!asked.has(handle) && l.followers.includes(replicaId)) return CATCH_UP_FETCH_WAIT_MS;
    }
    return maxWaitMs;
  }

  private expire(now: number): void {
    for (const [handle, l] of this.byHandle) {
      if (now - l.since < RECENT_LEADERSHIP_WINDOW_MS) break;
      this.byHandle.delete(handle);
    }
  }
}
