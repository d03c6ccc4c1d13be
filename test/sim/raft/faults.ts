// The fault parameters of one simulated run, all drawn from its seed and printed with any failure
// so a report says what the network, disks and crashes were doing. Times are in ticks (one tick
// is the nodes' nominal time unit; KRaft's 1000 ms election timeout is 10 ticks here).
import { SimRandom } from './random.js';

export interface FaultPlan {
  readonly voters: number;
  readonly observers: number;
  /** Each node ticks every (1 ± drift) ticks of simulated time. */
  readonly clockDrift: number;
  /** One-way message delay drawn uniformly from [minDelay, maxDelay] ticks. */
  readonly minDelay: number;
  readonly maxDelay: number;
  /** A delayed message waits `spikeFactor` times longer: the main source of reordering. */
  readonly spikeRate: number;
  readonly spikeFactor: number;
  readonly dropRate: number;
  readonly duplicateRate: number;
  /** Mean ticks between network changes (partitions, one-way cuts, flapping links, heals). */
  readonly networkChangeEvery: number;
  /** Mean ticks between crashes; a crashed node stays down for [1, maxDowntime] ticks. */
  readonly crashEvery: number;
  readonly maxDowntime: number;
  /** Chance that a crash with writes in flight keeps a random prefix of them (a torn tail). */
  readonly tornRate: number;
  /** A log append becomes durable [0, maxDiskDelay] ticks after it was queued (FIFO per node). */
  readonly maxDiskDelay: number;
  /** Mean ticks between client proposals. */
  readonly proposeEvery: number;
  readonly safetyTicks: number;
  /** The nodes' flow control: bytes per fetch response, uncommitted bytes a leader accepts. */
  readonly maxFetchBytes: number;
  readonly maxUncommittedBytes: number;
  /** Mean ticks between leadership transfers the operator asks of the leader (EndQuorumEpoch hand-offs). */
  readonly transferEvery: number;
  /** A node snapshots its state machine and compacts once it applied this many entries past its snapshot; 0: never. */
  readonly compactEvery: number;
  /** Mean ticks between voter changes (add or remove, KIP-853) the operator asks of the leader; 0: a static quorum. */
  readonly membershipEvery: number;
  /** Mean ticks between spurious unreachable reports (a connection blip while the peer is fine). */
  readonly spuriousReportEvery: number;
}

/** Fault parameters for one seed: every run picks its own mix, from calm to hostile. */
export function drawFaults(seed: number): FaultPlan {
  const r = SimRandom.derived(seed, 0);
  const minDelay = r.between(0.01, 0.3);
  return {
    voters: r.chance(0.5) ? 3 : 5,
    observers: r.int(0, 2),
    clockDrift: r.between(0, 0.1),
    minDelay,
    maxDelay: minDelay + r.between(0.05, 2.5),
    spikeRate: r.between(0, 0.1),
    spikeFactor: r.between(2, 8),
    dropRate: r.chance(0.2) ? 0 : r.between(0, 0.2),
    duplicateRate: r.chance(0.3) ? 0 : r.between(0, 0.08),
    networkChangeEvery: r.between(15, 120),
    crashEvery: r.between(20, 200),
    maxDowntime: r.between(5, 80),
    tornRate: r.between(0, 1),
    maxDiskDelay: r.between(0.01, 1.5),
    proposeEvery: r.between(0.5, 5),
    safetyTicks: r.int(100, 220),
    maxFetchBytes: r.int(64, 1024),
    maxUncommittedBytes: r.int(200, 4000),
    compactEvery: r.chance(0.3) ? 0 : r.int(5, 80),
    transferEvery: r.between(30, 300),
    membershipEvery: r.chance(0.25) ? 0 : r.between(10, 120),
    spuriousReportEvery: r.between(3, 60),
  };
}

export function formatFaults(p: FaultPlan): string {
  const f = (x: number): string => (Number.isInteger(x) ? String(x) : x.toFixed(3));
  return Object.entries(p).map(([k, v]) => `${k}=${f(v as number)}`).join(' ');
}
