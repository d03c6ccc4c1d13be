// The metadata quorum as operators see it (main thread): a snapshot of one node's Raft state for
// GET /v1/quorum and the raft metrics (on the leader, every replica's lag behind its log end), and
// the health judgement that the quorum is lost when no leader has been known for longer than
// twice the election timeout (one timeout to notice the leader is gone, one for an election).
// A prospective or candidate node may still name its last leader (KIP-996's pre-vote keeps it),
// but it has stopped hearing from it: only a leader, follower or observer with a leader has one.
import type { NodeId, Role } from '../../coordinator/raft/types.js';
import type { LeaderChange, QuorumDriver } from './quorum_driver.js';

export interface ReplicaReport {
  readonly id: NodeId;
  readonly voter: boolean;
  readonly logEndOffset: number;
  /** The leader's log end offset less this replica's. */
  readonly lagOffsets: number;
  /** Ms since this replica last fetched from the leader; -1 if it never has. */
  readonly lastFetchMsAgo: number;
}

export interface QuorumReport {
  readonly nodeId: NodeId;
  readonly role: Role;
  readonly epoch: number;
  /** -1 while no leader is known. */
  readonly leaderId: NodeId;
  readonly highWatermark: number;
  readonly logEndOffset: number;
  readonly voters: readonly NodeId[];
  /** Only on the leader, which alone tracks its replicas (itself first). */
  readonly replicas?: readonly ReplicaReport[];
}

export type QuorumSource = Pick<QuorumDriver, 'nodeId' | 'status' | 'tickToMs'>;

export function quorumReport(driver: QuorumSource, nowMs: number = Date.now()): QuorumReport {
  const s = driver.status();
  const report = {
    nodeId: driver.nodeId,
    role: s.role,
    epoch: s.epoch,
    leaderId: s.leaderId,
    highWatermark: s.highWatermark,
    logEndOffset: s.logEndOffset,
    voters: s.voters,
  };
  if (s.role !== 'leader') return report;
  const replicas = s.replicas.map((r) => {
    const fetchedAt = driver.tickToMs(r.lastFetchTick);
    return {
      id: r.id,
      voter: r.voter,
      logEndOffset: r.logEndOffset,
      lagOffsets: Math.max(0, s.logEndOffset - r.logEndOffset),
      lastFetchMsAgo: fetchedAt < 0 ? -1 : Math.max(0, nowMs - fetchedAt),
    };
  });
  return { ...report, replicas };
}

export interface QuorumHealthReport {
  readonly state: 'ok' | 'lost';
  readonly leaderId: NodeId;
  readonly epoch: number;
  readonly role: Role;
  /** Ms without a leader this node follows (or is); 0 while there is one. */
  readonly leaderlessMs: number;
}

function hasLeader(c: LeaderChange): boolean {
  return c.leaderId >= 0 && (c.role === 'leader' || c.role === 'follower' || c.role === 'observer');
}

export type LeaderSource = Pick<QuorumDriver, 'leader' | 'onLeaderChange' | 'electionTimeoutMs'>;

/** Remembers since when no leader has been known, from the driver's leader changes. */
export class QuorumHealth {
  private leaderlessSince: number | null;

  constructor(
    private readonly driver: LeaderSource,
    private readonly clock: () => number = Date.now,
  ) {
    this.leaderlessSince = hasLeader(driver.leader) ? null : clock();
    driver.onLeaderChange((c: LeaderChange) => {
      if (hasLeader(c)) this.leaderlessSince = null;
      else this.leaderlessSince ??= this.clock();
    });
  }

  check(): QuorumHealthReport {
    const { leaderId, epoch, role } = this.driver.leader;
    const leaderlessMs = this.leaderlessSince === null ? 0 : this.clock() - this.leaderlessSince;
    return { state: leaderlessMs > 2 * this.driver.electionTimeoutMs ? 'lost' : 'ok', leaderId, epoch, role, leaderlessMs };
  }
}
