// The leader's bookkeeping per replica (voters and observers that fetch from it): how far each has
// durably replicated, when it last fetched and when it was last caught up. Pure; lives with its
// RaftNode. Observers are keyed by client input (any node may fetch), so their number is bounded.
import { caughtUpAfterFetch } from '../replication/caught_up.js';
import type { NodeId } from './types.js';

/** Observers beyond this many are forgotten, least recently fetched first. */
export const MAX_TRACKED_OBSERVERS = 256;

export interface ReplicaProgress {
  readonly id: NodeId;
  /** The replica's durable log end (its last valid fetch offset in this epoch), -1 until it fetches. */
  logEndOffset: number;
  lastFetchTick: number;
  /** The latest tick at which the replica held everything the leader held (Kafka's lastCaughtUpTimeMs). */
  lastCaughtUpTick: number;
  /** The leader's log end when the previous fetch arrived, for lastCaughtUpTick. */
  leaderEndAtLastFetch: number;
  /** The high watermark last sent to it: a parked fetch is answered early when this falls behind. */
  sentHighWatermark: number;
  /** True once it has fetched in this epoch: BeginQuorumEpoch is re-sent only to voters that have not. */
  fetchedThisEpoch: boolean;
}

export class ProgressTracker {
  private readonly replicas = new Map<NodeId, ReplicaProgress>();

  /** Fresh bookkeeping for a new leadership: every voter counts as heard from at `now` (check-quorum grace). */
  constructor(voters: readonly NodeId[], self: NodeId, now: number) {
    for (const id of voters) if (id !== self) this.replicas.set(id, fresh(id, now, -1));
  }

  get(id: NodeId): ReplicaProgress | undefined {
    return this.replicas.get(id);
  }

  /** The replica's record, created on its first fetch; an observer past the bound evicts the stalest observer. */
  track(id: NodeId, now: number, voters: readonly NodeId[]): ReplicaProgress {
    let progress = this.replicas.get(id);
    if (progress === undefined) {
      if (!voters.includes(id)) this.evictObserversBeyond(MAX_TRACKED_OBSERVERS - 1, voters);
      progress = fresh(id, now, -1);
      this.replicas.set(id, progress);
    }
    return progress;
  }

  /** Records a valid fetch at `fetchOffset` while the leader's log ends at `leaderEnd`. */
  recordFetch(progress: ReplicaProgress, fetchOffset: number, leaderEnd: number, now: number): void {
    progress.lastCaughtUpTick = caughtUpAfterFetch(
      { lastCaughtUp: progress.lastCaughtUpTick, lastFetch: progress.lastFetchTick, leaderEndAtLastFetch: progress.leaderEndAtLastFetch },
      fetchOffset,
      leaderEnd,
      now,
    );
    progress.logEndOffset = fetchOffset;
    progress.leaderEndAtLastFetch = leaderEnd;
    progress.lastFetchTick = now;
    progress.fetchedThisEpoch = true;
  }

  all(): IterableIterator<ReplicaProgress> {
    return this.replicas.values();
  }

  private evictObserversBeyond(limit: number, voters: readonly NodeId[]): void {
    const observers = [...this.replicas.values()].filter((p) => !voters.includes(p.id));
    observers.sort((a, b) => a.lastFetchTick - b.lastFetchTick);
    for (const stale of observers.slice(0, Math.max(0, observers.length - limit))) this.replicas.delete(stale.id);
  }
}

function fresh(id: NodeId, now: number, logEndOffset: number): ReplicaProgress {
  return {
    id,
    logEndOffset,
    lastFetchTick: now,
    lastCaughtUpTick: -1,
    leaderEndAtLastFetch: -1,
    sentHighWatermark: -1,
    fetchedThisEpoch: false,
  };
}
