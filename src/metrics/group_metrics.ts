// Consumer-group figures in Prometheus form, fed from the shards' snapshots at scrape time:
// groups by state, members, rebalances by reason and their durations, and each group's
// committed offset and lag per partition, in records and in seconds (from each partition's log
// end offsets sampled by the broker's OffsetHistory), and members per group with committed offsets
// (a group with none consumes nothing, so its lag says nothing of how fast consumers keep up).
// Main thread; registered on the broker's registry.
// Invariant: the per-(group, topic, partition) series mirror the latest snapshots and are capped
// at MAX_OFFSET_SERIES, so thousands of groups cannot grow the registry without bound.
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { CumulativeCounter } from './cumulative_counter.js';
import type { OffsetHistory } from './offset_history.js';
import { MAX_OFFSET_SERIES, type GroupShardSnapshot } from '../actors/shard_snapshot.js';

const STATES = ['Empty', 'PreparingRebalance', 'CompletingRebalance', 'Stable', 'Assigning', 'Reconciling'] as const;
const OFFSET_LABELS = ['group', 'topic', 'partition'] as const;
type OffsetLabels = Record<(typeof OFFSET_LABELS)[number], string>;

export class GroupMetrics {
  private readonly groups: Gauge<'state'>;
  private readonly members: Gauge;
  private readonly rebalances: CumulativeCounter<'reason'>;
  private readonly duration: Histogram;
  private readonly committed: Gauge<(typeof OFFSET_LABELS)[number]>;
  private readonly lag: Gauge<(typeof OFFSET_LABELS)[number]>;
  private readonly lagSeconds: Gauge<(typeof OFFSET_LABELS)[number]>;
  private readonly groupMembers: Gauge<'group'>;
  private series = new Map<string, OffsetLabels>();
  private groupSeries = new Set<string>();
  /** `offsets`: the broker's log-end history, fed by its owner; `now` in ms on the same clock. */
  constructor(registry: Registry, private readonly offsets: OffsetHistory, private readonly now: () => number) {
    const registers = [registry];
    this.groups = new Gauge({ name: 'sluice_groups', help: 'Consumer groups by state', labelNames: ['state'], registers });
    this.members = new Gauge({ name: 'sluice_group_members', help: 'Members across all consumer groups', registers });
    this.rebalances = new CumulativeCounter(
      new Counter({ name: 'sluice_group_rebalances_total', help: 'Completed group rebalances, by reason', labelNames: ['reason'], registers }),
    );
    this.duration = new Histogram({
      name: 'sluice_group_rebalance_duration_seconds', help: 'Time from a rebalance starting to its new generation being in force',
      buckets: [0.01, 0.05, 0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 300], registers,
    });
    this.committed = new Gauge({ name: 'sluice_group_committed_offset', help: 'Committed offset of a group on a partition', labelNames: OFFSET_LABELS, registers });
    this.lag = new Gauge({ name: 'sluice_group_lag_messages', help: 'Log end offset minus the committed offset', labelNames: OFFSET_LABELS, registers });
    this.lagSeconds = new Gauge({
      name: 'sluice_group_lag_seconds',
      help: 'How long ago the first record after the committed offset was appended (estimated from log end offsets seen at scrapes; 0 when caught up)',
      labelNames: OFFSET_LABELS, registers,
    });
    this.groupMembers = new Gauge({ name: 'sluice_group_member_count', help: 'Members of a group with committed offsets', labelNames: ['group'], registers });
  }

  /** `logEnd` gives a partition's log end offset, or undefined if it is not hosted. */
  apply(shards: readonly { shard: number; groups: GroupShardSnapshot }[], logEnd: (topic: string, partition: number) => number | undefined): void {
    const byState = new Map<string, number>(STATES.map((s) => [s, 0]));
    let members = 0;
    const series = new Map<string, OffsetLabels>();
    const groupSeries = new Set<string>();
    const now = this.now();
    for (const { shard, groups } of shards) {
      for (const [state, n] of Object.entries(groups.byState)) if (byState.has(state)) byState.set(state, byState.get(state)! + n);
      members += groups.members;
      for (const [reason, total] of Object.entries(groups.rebalances)) this.rebalances.feed({ reason }, `${shard}\u0000${reason}`, total);
      for (const ms of groups.rebalanceMs) this.duration.observe(ms / 1000);
      for (const c of groups.committed) {
        if (series.size >= MAX_OFFSET_SERIES) break;
        const labels = { group: c.group, topic: c.topic, partition: String(c.partition) };
        series.set(`${c.group}\u0000${c.topic}\u0000${c.partition}`, labels);
        groupSeries.add(c.group);
        this.groupMembers.set({ group: c.group }, c.members);
        this.committed.set(labels, c.offset);
        const end = logEnd(c.topic, c.partition);
        if (end === undefined) continue;
        this.lag.set(labels, Math.max(0, end - c.offset));
        // A lower bound when the offset predates the history: the gauge carries no marking.
        const behind = this.offsets.lagSeconds(c.topic, c.partition, c.offset, now);
        if (behind === null) this.lagSeconds.remove(labels);
        else this.lagSeconds.set(labels, behind.seconds);
      }
    }
    for (const [state, n] of byState) this.groups.set({ state }, n);
    this.members.set(members);
    for (const [key, labels] of this.series) {
      if (series.has(key)) continue;
      this.committed.remove(labels);
      this.lag.remove(labels);
      this.lagSeconds.remove(labels);
    }
    this.series = series;
    for (const group of this.groupSeries) if (!groupSeries.has(group)) this.groupMembers.remove({ group });
    this.groupSeries = groupSeries;
  }
}
