// ReplicationMetrics: partition states counted from a metadata image (under-replicated only where
// this broker leads, offline and reassigning cluster-wide), the active controller flag, ISR
// shrinks and expands of partitions led here from image to image, and the log dir's file system.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BrokerMetrics } from '../../../src/metrics/metrics.js';
import type { PartitionRecord, TopicImage } from '../../../src/cluster/cluster_view.js';
import type { ReplicationSource } from '../../../src/metrics/replication_metrics.js';

function record(replicas: number[], isr: number[], leader: number, adding: number[] = [], removing: number[] = [], leaderEpoch = 0): PartitionRecord {
  return { topicId: 'x', partition: 0, replicas, isr, leader, addingReplicas: adding, removingReplicas: removing, leaderEpoch, partitionEpoch: 0 };
}

/** A view over `partitions`, which the test may change (then bump `revision`). */
function view(localId: number, controllerId: number, partitions: Record<string, PartitionRecord[]>): ReplicationSource & { revision: number } {
  const topics: TopicImage[] = Object.entries(partitions).map(([name, ps], i) => ({ name, id: String(i).padStart(32, '1'), partitions: ps.length, configs: {} }));
  return { localId, revision: 0, controllerId: () => controllerId, topics: () => topics, partition: (topic, p) => partitions[topic]?.[p] };
}

function sample(text: string, name: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${name} `) || l.startsWith(`${name}{`));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

test('partition states, controller and ISR changes from the image', async (t) => {
  const m = new BrokerMetrics();
  t.after(() => m.close());
  const dir = mkdtempSync(join(tmpdir(), 'sluice-repl-metrics-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  m.watchCluster(view(1, 1, {
    a: [
      record([1, 2, 3], [1, 2], 1), // led here, short ISR
      record([2, 1, 3], [2], 2), // short ISR, led elsewhere: that leader counts it
      record([1, 2], [], -1), // offline
      record([1, 2, 4], [1, 2, 4], 1, [4]), // reassigning, 4 caught up
    ],
    b: [record([3, 4, 1, 2], [1, 2], 1, [3, 4], [1, 2])], // led here, ISR short, reassigning, 3 and 4 behind
  }), dir);
  const text = await m.metricsText();
  assert.equal(sample(text, 'sluice_under_replicated_partitions'), 2);
  assert.equal(sample(text, 'sluice_offline_partitions'), 1);
  assert.equal(sample(text, 'sluice_reassigning_partitions'), 2);
  assert.equal(sample(text, 'sluice_reassignment_replicas_catching_up'), 2);
  assert.equal(sample(text, 'sluice_controller_active'), 1);
  assert.equal(sample(text, 'sluice_isr_shrinks_total'), 0);
  const total = sample(text, 'sluice_log_dir_total_bytes')!;
  const usable = sample(text, 'sluice_log_dir_usable_bytes')!;
  assert.ok(total > 0 && usable >= 0 && usable <= total, `${usable} of ${total}`);
  assert.match(text, new RegExp(`sluice_log_dir_total_bytes\\{dir="${dir}"\\}`));
});

test('a broker that is not the controller reports 0; the cluster is watched once', async (t) => {
  const m = new BrokerMetrics();
  t.after(() => m.close());
  m.watchCluster(view(2, 1, {}), tmpdir());
  assert.equal(sample(await m.metricsText(), 'sluice_controller_active'), 0);
  assert.throws(() => m.watchCluster(view(2, 1, {}), tmpdir()));
});

test('ISR shrinks and expands of partitions led here, image to image, within one leadership', async (t) => {
  const m = new BrokerMetrics();
  t.after(() => m.close());
  const parts = { a: [record([1, 2, 3], [1, 2, 3], 1), record([2, 1, 3], [2, 1, 3], 2)] };
  const v = view(1, 1, parts);
  m.watchCluster(v, tmpdir());
  const publish = (p0: PartitionRecord, p1: PartitionRecord = parts.a[1]!): void => {
    parts.a[0] = p0;
    parts.a[1] = p1;
    v.revision++;
    m.metadataPublished();
  };
  publish(record([1, 2, 3], [1, 2], 1)); // shrink
  publish(record([1, 2, 3], [1], 1), record([2, 1, 3], [2], 2)); // shrink here; the other is led elsewhere
  m.metadataPublished(); // same revision: nothing new
  publish(record([1, 2, 3], [1, 3], 1)); // expand
  publish(record([1, 2, 3], [1, 2, 3], 1)); // expand
  publish(record([1, 2, 3], [1], 1, [], [], 1)); // a new leadership of this broker starts afresh
  publish(record([1, 2, 3], [1, 2], 2, [], [], 2)); // led elsewhere now
  publish(record([1, 2, 3], [1], 1, [], [], 3)); // led here again: its first image counts nothing
  const text = await m.metricsText();
  assert.equal(sample(text, 'sluice_isr_shrinks_total'), 2);
  assert.equal(sample(text, 'sluice_isr_expands_total'), 2);
});
