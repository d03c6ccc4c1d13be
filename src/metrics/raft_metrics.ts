// Metadata-quorum figures in Prometheus form (main thread), registered on the broker's registry
// only on a node that runs the quorum, so a single-node broker exports no raft series. The epoch
// and leader changes follow the driver's leader changes; commit latency is observed as each
// proposal commits on the leader; each voter's append lag is sampled from the driver's status at
// scrape time.
// Invariant: the per-voter lag series mirror the latest scrape's voters on the leader (none
// elsewhere), so they are bounded by the voter set, itself bounded by the quorum's configuration.
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { QuorumDriver } from '../actors/quorum/quorum_driver.js';
import { quorumReport, type QuorumSource } from '../actors/quorum/quorum_report.js';

/** Proposal to commit takes an fdatasync on a majority and a round trip: 1 ms to 10 s. */
const COMMIT_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export type RaftMetricsSource = QuorumSource & Pick<QuorumDriver, 'leader' | 'onLeaderChange' | 'onProposalCommitted'>;

export class RaftMetrics {
  private readonly epoch: Gauge;
  private readonly leaderChanges: Counter;
  private readonly commitLatency: Histogram;
  private readonly appendLag: Gauge<'voter'>;
  private lagVoters = new Set<string>();

  constructor(
    registry: Registry,
    private readonly driver: RaftMetricsSource,
  ) {
    const registers = [registry];
    this.epoch = new Gauge({ name: 'sluice_raft_epoch', help: 'The metadata quorum epoch this node knows', registers });
    this.leaderChanges = new Counter({
      name: 'sluice_raft_leader_changes_total',
      help: 'Metadata quorum leaders this node learned of (a known leader in a new epoch, or another node in the same one)',
      registers,
    });
    this.commitLatency = new Histogram({
      name: 'sluice_raft_commit_latency_seconds',
      help: 'On the metadata quorum leader: time from a proposal to its commit',
      buckets: COMMIT_BUCKETS,
      registers,
    });
    this.appendLag = new Gauge({
      name: 'sluice_raft_append_lag_offsets',
      help: 'On the metadata quorum leader: its log end offset less each voter\'s',
      labelNames: ['voter'],
      registers,
    });
    let counted = driver.leader;
    this.epoch.set(counted.epoch);
    driver.onLeaderChange((c) => {
      this.epoch.set(c.epoch);
      if (c.leaderId < 0 || (c.epoch === counted.epoch && c.leaderId === counted.leaderId)) return;
      this.leaderChanges.inc();
      counted = c;
    });
    driver.onProposalCommitted((ms) => this.commitLatency.observe(ms / 1000));
  }

  /** Samples the driver's status just before the registry is rendered. */
  sample(): void {
    const report = quorumReport(this.driver);
    this.epoch.set(report.epoch);
    const voters = new Set<string>();
    for (const r of report.replicas ?? []) {
      if (!r.voter) continue;
      const voter = String(r.id);
      voters.add(voter);
      this.appendLag.set({ voter }, r.lagOffsets);
    }
    for (const voter of this.lagVoters) if (!voters.has(voter)) this.appendLag.remove({ voter });
    this.lagVoters = voters;
  }
}
