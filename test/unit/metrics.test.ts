// BrokerMetrics: shard snapshots become gauges/counters, vanished partitions and shards lose their
// label sets, cumulative shard totals become monotonic counters, free-form labels stay bounded;
// raft figures appear only once a quorum is watched, and voter lag series follow leadership;
// shards' group commit timings, and their request durations with main's own, add up into
// cumulative histograms.
import { availableParallelism } from 'node:os';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { LeaderChange } from '../../src/actors/quorum/quorum_driver.js';
import type { RaftStatus } from '../../src/coordinator/raft/raft_node.js';
import { BrokerMetrics } from '../../src/metrics/metrics.js';
import { OffsetHistory } from '../../src/metrics/offset_history.js';
import type { RaftMetricsSource } from '../../src/metrics/raft_metrics.js';
import type { GroupShardSnapshot, PartitionSnapshot, RingStatsSnapshot, ShardSnapshot, ShardTraffic } from '../../src/actors/shard_snapshot.js';
import { BucketHistogram, DISK_FLUSH_BOUNDS, REQUEST_LATENCY_BOUNDS, type BucketCounts } from '../../src/common/bucket_histogram.js';
import type { CommitTimings } from '../../src/log/group_commit.js';
import { churnYoungGeneration } from '../helpers/young_gc.js';

function ring(usedBytes: number, wakeups = 0): RingStatsSnapshot {
  return { capacity: 1024, usedBytes, messagesWritten: 0, messagesRead: 0, consumerWakeups: wakeups, producerWakeups: 0, consumerWaits: wakeups, producerWaits: 0 };
}

function part(topic: string, partition: number, end: number): PartitionSnapshot {
  return { topic, partition, sizeBytes: end * 100, logStartOffset: 0, logEndOffset: end, highWatermark: end };
}

const NO_GROUPS: GroupShardSnapshot = { byState: {}, members: 0, rebalances: {}, rebalanceMs: [], committed: [] };
const NO_TRAFFIC: ShardTraffic = { linkBytesIn: 0, linkBytesOut: 0, replicaBytesFetched: 0, logBytesWritten: 0 };

/** What a BucketHistogram of `bounds` hands on after observing `seconds`. */
function observed(seconds: number[], bounds = DISK_FLUSH_BOUNDS): BucketCounts {
  const h = new BucketHistogram(bounds);
  for (const s of seconds) h.observe(s);
  return h.take();
}

/** A shard's group commit timings with these durations and queue waits (seconds). */
function commitTimings(durations: number[], queueWaits: number[]): CommitTimings {
  return { durations: observed(durations), queueWait: observed(queueWaits) };
}

function shard(id: number, partitions: PartitionSnapshot[], handled = 0, wakeups = 0, groups = NO_GROUPS, traffic = NO_TRAFFIC): ShardSnapshot {
  return { shard: id, loopDelay: { samples: 100, meanMs: 3, p99Ms: 4, maxMs: 5, ownP99Ms: 2, ownMaxMs: 3, cpuWaitRatio: 0.25 }, toShard: ring(10, wakeups), toMain: ring(20), partitions, handled, busyMs: 1500, lastError: null, storageErrors: 3, rescannedSegments: 2, uncommittedProduceBytesPeak: 4096, uncommittedProduceWaits: 5, groups, traffic, logFlush: commitTimings([], []), gcPauses: [] };
}

/** The sample value of `name{labels}` in the exposition, or undefined if absent. */
function sample(text: string, name: string, labels: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${name}{${labels}}`));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

test('snapshots feed partition, ring and shard metrics', async (t) => {
  const m = new BrokerMetrics();
  t.after(() => m.close());
  m.applyShardSnapshots([shard(0, [part('orders', 0, 7), part('orders', 1, 9)], 42), shard(1, [part('logs', 0, 1)])]);
  const text = await m.metricsText();
  assert.equal(sample(text, 'sluice_partition_log_end_offset', 'topic="orders",partition="1"'), 9);
  assert.equal(sample(text, 'sluice_partition_log_size_bytes', 'topic="orders",partition="0"'), 700);
  assert.equal(sample(text, 'sluice_partition_high_watermark', 'topic="logs",partition="0"'), 1);
  assert.equal(sample(text, 'sluice_ring_used_bytes', 'shard="0",direction="to_main"'), 20);
  assert.equal(sample(text, 'sluice_event_loop_lag_seconds', 'thread="shard-1"'), 0.003);
  assert.equal(sample(text, 'sluice_event_loop_lag_p99_seconds', 'thread="shard-1"'), 0.004);
  assert.equal(sample(text, 'sluice_event_loop_lag_max_seconds', 'thread="shard-1"'), 0.005);
  assert.equal(sample(text, 'sluice_event_loop_own_lag_p99_seconds', 'thread="shard-1"'), 0.002);
  assert.equal(sample(text, 'sluice_thread_cpu_wait_ratio', 'thread="shard-1"'), 0.25);
  assert.equal(sample(text, 'sluice_shard_messages_handled_total', 'shard="0"'), 42);
  assert.equal(sample(text, 'sluice_shard_busy_seconds_total', 'shard="1"'), 1.5);
  assert.equal(sample(text, 'sluice_storage_errors_total', 'shard="1"'), 3);
  assert.equal(sample(text, 'sluice_log_recovery_rescanned_segments_total', 'shard="1"'), 2);
  assert.equal(sample(text, 'sluice_uncommitted_produce_bytes_max', 'shard="1"'), 4096);
  assert.equal(sample(text, 'sluice_uncommitted_produce_waits_total', 'shard="1"'), 5);
});

test('partitions and shards that disappear lose their series', async (t) => {
  const m = new BrokerMetrics();
  t.after(() => m.close());
  m.applyShardSnapshots([shard(0, [part('a', 0, 1), part('a', 1, 1)]), shard(1, [part('b', 0, 1)])]);
  m.applyShardSnapshots([shard(0, [part('a', 0, 2)])]);
  const text = await m.metricsText();
  assert.equal(sample(text, 'sluice_partition_log_end_offset', 'topic="a",partition="0"'), 2);
  for (const name of ['sluice_partition_log_end_offset', 'sluice_partition_log_start_offset', 'sluice_partition_log_size_bytes', 'sluice_partition_high_watermark']) {
    assert.equal(sample(text, name, 'topic="a",partition="1"'), undefined, name);
    assert.equal(sample(text, name, 'topic="b",partition="0"'), undefined, name);
  }
  assert.equal(sample(text, 'sluice_ring_used_bytes', 'shard="1",direction="to_shard"'), undefined);
  assert.equal(sample(text, 'sluice_event_loop_lag_seconds', 'thread="shard-1"'), undefined);
  assert.equal(sample(text, 'sluice_event_loop_lag_max_seconds', 'thread="shard-1"'), undefined);
  assert.equal(sample(text, 'sluice_thread_cpu_wait_ratio', 'thread="shard-1"'), undefined);
  assert.equal(sample(text, 'sluice_shard_messages_handled_total', 'shard="1"'), undefined);
  assert.equal(sample(text, 'sluice_uncommitted_produce_bytes_max', 'shard="1"'), undefined);
  assert.equal(sample(text, 'sluice_uncommitted_produce_waits_total', 'shard="1"'), undefined);
});

test('cumulative shard totals stay monotonic across a shard restart', async (t) => {
  const m = new BrokerMetrics();
  t.after(() => m.close());
  m.applyShardSnapshots([shard(0, [], 10, 4)]);
  m.applyShardSnapshots([shard(0, [], 25, 6)]);
  m.applyShardSnapshots([shard(0, [], 5, 1)]); // restarted: counts again from zero
  const text = await m.metricsText();
  assert.equal(sample(text, 'sluice_shard_messages_handled_total', 'shard="0"'), 30);
  assert.equal(sample(text, 'sluice_ring_wakeups_total', 'shard="0",direction="to_shard",side="consumer"'), 7);
});

test('group commit timings: cumulative le buckets per shard, summed across snapshots, gone with their shard', async (t) => {
  const m = new BrokerMetrics();
  t.after(() => m.close());
  m.applyShardSnapshots([{ ...shard(0, []), logFlush: commitTimings([0.0008, 0.003], [0.02]) }, shard(1, [])]);
  m.applyShardSnapshots([{ ...shard(0, []), logFlush: commitTimings([0.0004, 7], [0.0001]) }, shard(1, [])]);
  let text = await m.metricsText();
  assert.match(text, /^# TYPE sluice_log_flush_seconds histogram$/m);
  const flush = (le: string): number | undefined => sample(text, 'sluice_log_flush_seconds_bucket', `shard="0",le="${le}"`);
  assert.deepEqual(['0.0001', '0.0005', '0.001', '0.0025', '0.005', '5', '+Inf'].map(flush), [0, 1, 2, 2, 3, 3, 4]);
  assert.equal(sample(text, 'sluice_log_flush_seconds_count', 'shard="0"'), 4);
  assert.ok(Math.abs(sample(text, 'sluice_log_flush_seconds_sum', 'shard="0"')! - 7.0042) < 1e-9);
  const wait = (le: string): number | undefined => sample(text, 'sluice_log_flush_queue_seconds_bucket', `shard="0",le="${le}"`);
  assert.deepEqual(['0.0001', '0.01', '0.025', '+Inf'].map(wait), [1, 1, 2, 2]);
  assert.equal(sample(text, 'sluice_log_flush_queue_seconds_count', 'shard="0"'), 2);
  assert.equal(sample(text, 'sluice_log_flush_seconds_count', 'shard="1"'), 0, 'a shard without commits has its series from the start');
  const json = await m.registry.getMetricsAsJSON();
  assert.equal(json.find((x) => x.name === 'sluice_log_flush_queue_seconds')?.values.length, (DISK_FLUSH_BOUNDS.length + 3) * 2);

  m.applyShardSnapshots([shard(0, [])]);
  text = await m.metricsText();
  assert.equal(sample(text, 'sluice_log_flush_seconds_count', 'shard="0"'), 4, 'an empty delta adds nothing');
  assert.equal(sample(text, 'sluice_log_flush_seconds_count', 'shard="1"'), undefined);
  assert.equal(sample(text, 'sluice_log_flush_queue_seconds_bucket', 'shard="1",le="+Inf"'), undefined);
});

test('main-thread recording: requests, bytes, connections, bounded reasons', async (t) => {
  const m = new BrokerMetrics();
  t.after(() => m.close());
  m.recordRequest('Produce', 0.002);
  m.recordRequest('Produce', 0.004);
  m.recordRequest('Fetch', 0.1);
  m.addBytesIn(100);
  m.addBytesOut(50);
  m.connectionOpened();
  m.connectionOpened();
  m.connectionClosed();
  for (let i = 0; i < 100; i++) m.protocolError(`reason-${i}`);
  const text = await m.metricsText();
  assert.equal(sample(text, 'sluice_requests_total', 'api="Produce"'), 2);
  assert.equal(sample(text, 'sluice_request_duration_seconds_count', 'api="Produce"'), 2);
  assert.equal(sample(text, 'sluice_request_duration_seconds_bucket', 'api="Produce",le="0.0025"'), 1);
  assert.match(text, /^sluice_bytes_in_total 100$/m);
  assert.match(text, /^sluice_connections 1$/m);
  const reasons = text.split('\n').filter((l) => l.startsWith('sluice_protocol_errors_total{'));
  assert.equal(reasons.length, 65); // 64 distinct values, then everything else as "other"
  assert.equal(sample(text, 'sluice_protocol_errors_total', 'reason="other"'), 36);
});

test('shards\' request and fetch durations, reported as bucket counts, add up with main\'s own in one series', async (t) => {
  const m = new BrokerMetrics();
  t.after(() => m.close());
  const times = (seconds: number[]): BucketCounts => observed(seconds, REQUEST_LATENCY_BOUNDS);
  m.recordRequest('Produce', 0.002);
  // More than the 4096 a second a shard once listed one by one: every request counts.
  m.addRequestTimes('Produce', times([...new Array<number>(5000).fill(0.0004), 0.003]));
  m.addRequestTimes('Produce', times([40]));
  m.recordFetchServe('consumer', 0.0003);
  m.addFetchServeTimes('consumer', times([0.0006, 0.02]));
  const text = await m.metricsText();
  assert.equal(sample(text, 'sluice_requests_total', 'api="Produce"'), 5003);
  assert.equal(sample(text, 'sluice_request_duration_seconds_count', 'api="Produce"'), 5003);
  assert.equal(sample(text, 'sluice_request_duration_seconds_bucket', 'api="Produce",le="0.0005"'), 5000);
  assert.equal(sample(text, 'sluice_request_duration_seconds_bucket', 'api="Produce",le="0.0025"'), 5001);
  assert.equal(sample(text, 'sluice_request_duration_seconds_bucket', 'api="Produce",le="30"'), 5002);
  assert.equal(sample(text, 'sluice_request_duration_seconds_bucket', 'api="Produce",le="+Inf"'), 5003);
  assert.ok(Math.abs(sample(text, 'sluice_request_duration_seconds_sum', 'api="Produce"')! - (0.002 + 5000 * 0.0004 + 0.003 + 40)) < 1e-9);
  assert.equal(sample(text, 'sluice_fetch_serve_seconds_count', 'kind="consumer"'), 3);
  assert.equal(sample(text, 'sluice_fetch_serve_seconds_bucket', 'kind="consumer",le="0.001"'), 2);
  // Both fetchers' series exist before any fetch.
  assert.equal(sample(text, 'sluice_fetch_serve_seconds_count', 'kind="replica"'), 0);
  const traffic = await m.traffic();
  assert.equal(traffic.produceSeconds.count, 5003);
  assert.equal(traffic.fetchServeSeconds.count, 3);
  assert.throws(() => m.addRequestTimes('Fetch', new BucketHistogram([0.001, 1]).take()), /3 bucket counts for 15 bounds/);
});

test('GC pauses: each shard\'s by kind from its snapshots, main\'s own at each scrape; a shard that goes loses its series', async (t) => {
  const m = new BrokerMetrics();
  t.after(() => m.close());
  m.applyShardSnapshots([{ ...shard(0, []), gcPauses: [['minor', observed([0.002, 0.003])], ['major', observed([0.009])]] }]);
  m.applyShardSnapshots([{ ...shard(0, []), gcPauses: [['minor', observed([0.0004])]] }]);
  churnYoungGeneration();
  await new Promise((resolve) => setTimeout(resolve, 20)); // 'gc' entries reach their observer asynchronously
  let text = await m.metricsText();
  assert.equal(sample(text, 'sluice_gc_pause_seconds_count', 'thread="shard-0",kind="minor"'), 3);
  assert.equal(sample(text, 'sluice_gc_pause_seconds_bucket', 'thread="shard-0",kind="minor",le="0.0005"'), 1);
  assert.equal(sample(text, 'sluice_gc_pause_seconds_count', 'thread="shard-0",kind="major"'), 1);
  assert.ok(sample(text, 'sluice_gc_pause_seconds_count', 'thread="main",kind="minor"')! > 0, 'this thread\'s own scavenges');
  m.applyShardSnapshots([]);
  text = await m.metricsText();
  assert.equal(sample(text, 'sluice_gc_pause_seconds_count', 'thread="shard-0",kind="minor"'), undefined);
  assert.equal(sample(text, 'sluice_gc_pause_seconds_count', 'thread="shard-0",kind="major"'), undefined);
});

test('two instances do not share a registry', async (t) => {
  const a = new BrokerMetrics();
  const b = new BrokerMetrics();
  t.after(() => { a.close(); b.close(); });
  a.addMessagesIn(5);
  assert.match(await a.metricsText(), /^sluice_messages_in_total 5$/m);
  assert.match(await b.metricsText(), /^sluice_messages_in_total 0$/m);
});

test('group figures: states, members, rebalances by reason, committed offsets and lag', async (t) => {
  const m = new BrokerMetrics();
  t.after(() => m.close());
  const groups = (rebalances: number, committed: GroupShardSnapshot['committed']): GroupShardSnapshot => ({
    byState: { Stable: 2, Empty: 1 }, members: 5, rebalances: { join: rebalances }, rebalanceMs: [1500], committed,
  });
  m.applyShardSnapshots([shard(0, [part('orders', 0, 10)], 0, 0, groups(3, [{ group: 'g', members: 2, topic: 'orders', partition: 0, offset: 4 }]))]);
  m.applyShardSnapshots([shard(0, [part('orders', 0, 12)], 0, 0, groups(4, [{ group: 'h', members: 0, topic: 'orders', partition: 0, offset: 12 }]))]);
  const text = await m.metricsText();
  assert.equal(sample(text, 'sluice_groups', 'state="Stable"'), 2);
  assert.equal(sample(text, 'sluice_groups', 'state="PreparingRebalance"'), 0);
  assert.equal(sample(text, 'sluice_group_rebalances_total', 'reason="join"'), 4);
  assert.equal(sample(text, 'sluice_group_rebalance_duration_seconds_count', ''), undefined);
  assert.match(text, /sluice_group_rebalance_duration_seconds_count 2/);
  assert.equal(sample(text, 'sluice_group_lag_messages', 'group="h",topic="orders",partition="0"'), 0);
  assert.equal(sample(text, 'sluice_group_member_count', 'group="h"'), 0);
  assert.equal(sample(text, 'sluice_group_committed_offset', 'group="g",topic="orders",partition="0"'), undefined, 'vanished group series are removed');
  assert.equal(sample(text, 'sluice_group_member_count', 'group="g"'), undefined, 'and its member count');
});

/** A quorum driver's surface as the raft metrics see it, driven by the test. */
class FakeQuorum implements RaftMetricsSource {
  readonly nodeId = 1;
  leader: LeaderChange = { epoch: 0, leaderId: -1, role: 'unattached' };
  state: RaftStatus = {
    role: 'unattached', epoch: 0, leaderId: -1, votedFor: -1, highWatermark: 0, appliedOffset: 0, logStartOffset: 0, logEndOffset: 0, durableEndOffset: 0, voters: [1, 2, 3], replicas: [],
  };
  private readonly leaderListeners: ((c: LeaderChange) => void)[] = [];
  private readonly commitListeners: ((ms: number) => void)[] = [];
  status(): RaftStatus { return this.state; }
  tickToMs(tick: number): number { return tick; }
  onLeaderChange(l: (c: LeaderChange) => void): void { this.leaderListeners.push(l); }
  onProposalCommitted(l: (ms: number) => void): void { this.commitListeners.push(l); }
  change(c: LeaderChange, state: Partial<RaftStatus>): void {
    this.leader = c;
    this.state = { ...this.state, ...state, epoch: c.epoch, leaderId: c.leaderId, role: c.role };
    for (const l of this.leaderListeners) l(c);
  }
  commit(ms: number): void { for (const l of this.commitListeners) l(ms); }
}

test('raft figures: none until a quorum is watched; epoch, leader changes, commit latency, lag per voter on the leader only', async (t) => {
  const m = new BrokerMetrics();
  t.after(() => m.close());
  assert.doesNotMatch(await m.metricsText(), /sluice_raft_/);
  const q = new FakeQuorum();
  m.watchQuorum(q);
  q.change({ epoch: 1, leaderId: -1, role: 'candidate' }, {});
  q.change({ epoch: 1, leaderId: 1, role: 'leader' }, {
    logEndOffset: 50,
    replicas: [
      { id: 1, logEndOffset: 50, lastFetchTick: 0, lastCaughtUpTick: 0, voter: true },
      { id: 2, logEndOffset: 45, lastFetchTick: 0, lastCaughtUpTick: 0, voter: true },
      { id: 3, logEndOffset: 10, lastFetchTick: 0, lastCaughtUpTick: 0, voter: true },
      { id: 9, logEndOffset: 0, lastFetchTick: 0, lastCaughtUpTick: 0, voter: false },
    ],
  });
  q.commit(4);
  let text = await m.metricsText();
  assert.match(text, /^sluice_raft_epoch 1$/m);
  assert.match(text, /^sluice_raft_leader_changes_total 1$/m);
  assert.match(text, /^sluice_raft_commit_latency_seconds_count 1$/m);
  assert.equal(sample(text, 'sluice_raft_commit_latency_seconds_bucket', 'le="0.005"'), 1);
  assert.equal(sample(text, 'sluice_raft_commit_latency_seconds_bucket', 'le="0.0025"'), 0);
  assert.equal(sample(text, 'sluice_raft_append_lag_offsets', 'voter="1"'), 0);
  assert.equal(sample(text, 'sluice_raft_append_lag_offsets', 'voter="2"'), 5);
  assert.equal(sample(text, 'sluice_raft_append_lag_offsets', 'voter="3"'), 40);
  assert.equal(sample(text, 'sluice_raft_append_lag_offsets', 'voter="9"'), undefined);
  // Leadership moves to node 2 in a new epoch: one more change, and the lag series go with it.
  q.change({ epoch: 2, leaderId: 2, role: 'follower' }, { replicas: [] });
  text = await m.metricsText();
  assert.match(text, /^sluice_raft_epoch 2$/m);
  assert.match(text, /^sluice_raft_leader_changes_total 2$/m);
  assert.doesNotMatch(text, /^sluice_raft_append_lag_offsets\{/m);
  assert.throws(() => m.watchQuorum(q), /already watched/);
});

test('the figures a reassignment watches: fetch serving time, process CPU, socket, replication and log bytes', async (t) => {
  const m = new BrokerMetrics();
  t.after(() => m.close());
  m.recordFetchServe('consumer', 0.003);
  m.recordFetchServe('replica', 0.2);
  m.addSocketBytesIn(1000);
  m.addSocketBytesOut(300);
  m.addReplicaBytesServed(250);
  const traffic = (linkIn: number, fetched: number, written: number): ShardTraffic => ({ linkBytesIn: linkIn, linkBytesOut: 40, replicaBytesFetched: fetched, logBytesWritten: written });
  m.applyShardSnapshots([shard(0, [], 0, 0, NO_GROUPS, traffic(500, 400, 700)), shard(1, [], 0, 0, NO_GROUPS, traffic(50, 10, 90))]);
  let text = await m.metricsText();
  assert.equal(sample(text, 'sluice_fetch_serve_seconds_count', 'kind="consumer"'), 1);
  assert.equal(sample(text, 'sluice_fetch_serve_seconds_bucket', 'kind="consumer",le="0.0025"'), 0);
  assert.equal(sample(text, 'sluice_fetch_serve_seconds_bucket', 'kind="consumer",le="0.005"'), 1);
  assert.equal(sample(text, 'sluice_fetch_serve_seconds_count', 'kind="replica"'), 1);
  assert.equal(sample(text, 'sluice_network_bytes_total', 'direction="in"'), 1000 + 500 + 50);
  assert.equal(sample(text, 'sluice_network_bytes_total', 'direction="out"'), 300 + 40 + 40);
  assert.equal(sample(text, 'sluice_replication_bytes_total', 'direction="in"'), 410);
  assert.equal(sample(text, 'sluice_replication_bytes_total', 'direction="out"'), 250);
  const cpuBefore = Number(/^sluice_process_cpu_seconds_total (\S+)$/m.exec(text)?.[1]);
  assert.ok(cpuBefore > 0, 'the process has used some CPU');
  assert.equal(Number(/^sluice_process_cpu_cores (\S+)$/m.exec(text)?.[1]), availableParallelism());
  assert.equal(Number(/^sluice_log_bytes_written_total (\S+)$/m.exec(text)?.[1]), 790);
  // Totals only grow: a later snapshot adds its growth; busy work shows as more CPU seconds.
  m.applyShardSnapshots([shard(0, [], 0, 0, NO_GROUPS, traffic(600, 400, 1700)), shard(1, [], 0, 0, NO_GROUPS, traffic(50, 10, 90))]);
  const until = performance.now() + 30;
  while (performance.now() < until);
  text = await m.metricsText();
  assert.equal(Number(/^sluice_log_bytes_written_total (\S+)$/m.exec(text)?.[1]), 1790);
  assert.equal(sample(text, 'sluice_network_bytes_total', 'direction="in"'), 1650);
  assert.ok(Number(/^sluice_process_cpu_seconds_total (\S+)$/m.exec(text)?.[1]) > cpuBefore);
});

test('rings: fill ratio at the scrape, and the writers\' waits for space as a counter', async (t) => {
  const m = new BrokerMetrics();
  t.after(() => m.close());
  const full = (waits: number): RingStatsSnapshot => ({ ...ring(768), producerWaits: waits });
  m.applyShardSnapshots([{ ...shard(0, []), toShard: full(5) }]);
  m.applyShardSnapshots([{ ...shard(0, []), toShard: full(7) }]);
  const text = await m.metricsText();
  assert.equal(sample(text, 'sluice_ring_fill_ratio', 'shard="0",direction="to_shard"'), 0.75);
  assert.equal(sample(text, 'sluice_ring_full_total', 'shard="0",direction="to_shard"'), 7);
  assert.equal(sample(text, 'sluice_ring_full_total', 'shard="0",direction="to_main"'), 0);
  m.applyShardSnapshots([]);
  assert.equal(sample(await m.metricsText(), 'sluice_ring_fill_ratio', 'shard="0",direction="to_shard"'), undefined, 'a gone shard loses its series');
});

test('consumer lag in seconds: how long ago the first unconsumed record arrived, 0 when caught up', async (t) => {
  let now = 0;
  const history = new OffsetHistory();
  const m = new BrokerMetrics(history, () => now);
  // The broker's owner samples the log ends before each apply, as broker.ts does per scrape.
  const scrape = (snapshot: ShardSnapshot) => {
    history.record(snapshot.partitions, now);
    m.applyShardSnapshots([snapshot]);
  };
  t.after(() => m.close());
  const committed = (offset: number): GroupShardSnapshot => ({ ...NO_GROUPS, committed: [{ group: 'g', members: 1, topic: 'orders', partition: 0, offset }] });
  scrape(shard(0, [part('orders', 0, 10)], 0, 0, committed(10)));
  now = 15_000;
  scrape(shard(0, [part('orders', 0, 20)], 0, 0, committed(10)));
  assert.equal(sample(await m.metricsText(), 'sluice_group_lag_seconds', 'group="g",topic="orders",partition="0"'), 13.5, 'offset 10, first of the 10 records of 0-15 s, arrived about 1.5 s in');
  now = 75_000;
  scrape(shard(0, [part('orders', 0, 20)], 0, 0, committed(10)));
  assert.equal(sample(await m.metricsText(), 'sluice_group_lag_seconds', 'group="g",topic="orders",partition="0"'), 73.5);
  scrape(shard(0, [part('orders', 0, 20)], 0, 0, committed(20)));
  assert.equal(sample(await m.metricsText(), 'sluice_group_lag_seconds', 'group="g",topic="orders",partition="0"'), 0);
  scrape(shard(0, [part('orders', 0, 20)]));
  assert.equal(sample(await m.metricsText(), 'sluice_group_lag_seconds', 'group="g",topic="orders",partition="0"'), undefined, 'removed with the group\'s offsets');
});

test('slow requests are counted by API, with a bounded label set', async (t) => {
  const m = new BrokerMetrics();
  t.after(() => m.close());
  m.requestSlow('Produce');
  m.requestSlow('Produce');
  for (let i = 0; i < 200; i++) m.requestSlow(`api-${i}`);
  const text = await m.metricsText();
  assert.equal(sample(text, 'sluice_slow_requests_total', 'api="Produce"'), 2);
  assert.ok(text.split('\n').filter((l) => l.startsWith('sluice_slow_requests_total{')).length <= 65);
});
