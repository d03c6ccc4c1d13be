// The partition reconciler with plain-object shard controls over a metadata image view and a shard
// table: it opens what the view places on this broker (directories stamped with the topic id),
// only then makes partitions routable, closes and deletes partitions of topics that left the view
// or were replaced by a topic of the same name, confirms revisions only after acting on them, and
// lets a failed open reject its waiters and be retried by the next change.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PartitionReconciler, type PartitionControl } from '../../../src/actors/partition_reconciler.js';
import { ShardTable } from '../../../src/actors/shard_table.js';
import { CleanShutdownEntries, writeCleanShutdown, type CleanCloseEntry } from '../../../src/log/clean_shutdown.js';
import type { ClusterView, TopicImage } from '../../../src/cluster/cluster_view.js';
import { applyRecords } from '../../../src/cluster/metadata/delta.js';
import { MetadataImage } from '../../../src/cluster/metadata/image.js';
import { ImageClusterView } from '../../../src/cluster/metadata/image_view.js';
import type { MetadataRecord } from '../../../src/cluster/metadata/records.js';
import { resolveConfig } from '../../../src/config.js';
import { clusterView, endpoint } from '../../helpers/cluster_fixture.js';

/** Topics of broker 1 alone, changed one committed batch at a time, as the metadata quorum would. */
class ImageTopics {
  readonly view = new ImageClusterView('c', 1, 'PLAINTEXT', MetadataImage.EMPTY);
  private offset = 0;
  private ids = 0;

  create(name: string, partitions: number): TopicImage {
    const topicId = (++this.ids).toString(16).padStart(32, '0');
    const records: MetadataRecord[] = [{ type: 'topic', name, topicId }];
    for (let p = 0; p < partitions; p++) {
      records.push({ type: 'partition', topicId, partition: p, replicas: [1], isr: [1], removingReplicas: [], addingReplicas: [], leader: 1, leaderEpoch: 0, partitionEpoch: 0 });
    }
    this.commit(records);
    return this.view.topic(name)!;
  }

  /** A reassignment's change of one partition's replica list (leader 2 when this broker leaves). */
  replicas(name: string, partition: number, replicas: number[]): void {
    const leader = replicas.includes(1) ? 1 : replicas[0]!;
    this.commit([{ type: 'partitionChange', topicId: this.view.topic(name)!.id, partition, leader, isr: replicas, replicas, removingReplicas: [], addingReplicas: [] }]);
  }

  delete(name: string): void {
    this.commit([{ type: 'removeTopic', topicId: this.view.topic(name)!.id }]);
  }

  private commit(records: readonly MetadataRecord[]): void {
    this.view.update(applyRecords(this.view.image, records, { endOffset: ++this.offset, epoch: 1 }));
  }
}

interface Rig {
  readonly reconciler: PartitionReconciler;
  readonly shards: ShardTable;
  readonly table: ImageTopics;
  readonly view: ClusterView;
  /** Control calls in order, and directories reported removed. */
  readonly calls: string[];
  readonly removed: string[];
  /** While set, every open fails. */
  readonly faults: { failOpens: boolean };
}

function rig(dataDir: string, view?: ClusterView, cleanShutdown?: CleanShutdownEntries): Rig {
  const table = new ImageTopics();
  const v = view ?? table.view;
  const shards = new ShardTable(2);
  const calls: string[] = [];
  const removed: string[] = [];
  const faults = { failOpens: false };
  const control = (shard: number): PartitionControl => ({
    openPartition: (handle, topic, partition, _dir, _config, entry) => {
      if (faults.failOpens) return Promise.reject(new Error('disk full'));
      // Not routable before the shard confirmed the open.
      assert.equal(shards.handleOf(topic, partition), -1);
      calls.push(`open ${topic}-${partition} h${handle} s${shard}${entry ? ' clean' : ''}`);
      return Promise.resolve();
    },
    setBrokers: () => Promise.resolve(),
    setRoles: () => Promise.resolve(),
    setFollowerThrottle: () => Promise.resolve(),
    closePartition: (handle, deleteData) => {
      calls.push(`close h${handle} delete=${deleteData}`);
      return Promise.resolve();
    },
  });
  const reconciler = new PartitionReconciler({ ...resolveConfig([], {}).config, dataDir }, v, shards, control, (dir) => removed.push(dir), cleanShutdown);
  return { reconciler, shards, table, view: v, calls, removed, faults };
}

function inTmp(run: (dir: string) => Promise<void>): () => Promise<void> {
  return async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-recon-'));
    try {
      await run(dir);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };
}

describe('PartitionReconciler', () => {
  it('opens every partition of a new topic, stamps its directory with the topic id, then routes it', inTmp(async (dir) => {
    const r = rig(dir);
    const t = r.table.create('orders', 3);
    await r.reconciler.applied(r.view.revision);
    assert.equal(r.calls.filter((c) => c.startsWith('open orders-')).length, 3);
    for (let p = 0; p < 3; p++) {
      assert.ok(r.reconciler.handleOf('orders', p) >= 0);
      assert.match(readFileSync(join(dir, `orders-${p}`, 'partition.metadata'), 'utf8'), new RegExp(t.id));
    }
    r.calls.length = 0;
    await r.reconciler.applied(r.view.revision);
    assert.deepEqual(r.calls, [], 'a confirmed revision needs no second pass');
  }));

  it('hands the clean-shutdown entries found at start to the first pass\'s opens only', inTmp(async (dir) => {
    const entry = (name: string): CleanCloseEntry => ({
      dir: join(dir, name), logStartOffset: 0, logEndOffset: 0, highWatermark: 0, activeBase: 0, activeSize: 0,
      offsetIndex: null, timeIndex: null, snapshot: null, epochs: null,
    });
    writeCleanShutdown(0, [entry('a-0'), entry('b-0')]);
    const r = rig(dir, undefined, CleanShutdownEntries.take(dir));
    r.table.create('a', 1);
    await r.reconciler.applied(r.view.revision);
    r.table.create('b', 1);
    await r.reconciler.applied(r.view.revision);
    assert.deepEqual(r.calls.filter((c) => c.startsWith('open')).map((c) => c.replace(/ h\d+ s\d+/, '')), ['open a-0 clean', 'open b-0']);
  }));

  it('closes and deletes a deleted topic, and replaces a topic recreated under the same name', inTmp(async (dir) => {
    const r = rig(dir);
    r.table.create('a', 1);
    r.table.create('b', 1);
    await r.reconciler.applied(r.view.revision);
    const [oldA, oldB] = [r.reconciler.handleOf('a', 0), r.reconciler.handleOf('b', 0)];
    r.calls.length = 0;
    r.table.delete('a');
    r.table.delete('b');
    r.table.create('b', 1);
    await r.reconciler.applied(r.view.revision);
    assert.equal(r.reconciler.handleOf('a', 0), -1);
    const newB = r.reconciler.handleOf('b', 0);
    assert.ok(newB >= 0 && newB !== oldB);
    assert.deepEqual(r.calls.sort(), [`close h${oldA} delete=true`, `close h${oldB} delete=true`, `open b-0 h${newB} s${r.shards.shardOf(newB)}`].sort());
    assert.deepEqual(r.removed.sort(), [join(dir, 'a-0'), join(dir, 'b-0')]);
  }));

  it('closes and deletes a replica a reassignment moved off this broker, and opens it again when one moves it back', inTmp(async (dir) => {
    const r = rig(dir);
    r.table.create('t', 2);
    await r.reconciler.applied(r.view.revision);
    const [h0, h1] = [r.reconciler.handleOf('t', 0), r.reconciler.handleOf('t', 1)];
    r.calls.length = 0;
    r.table.replicas('t', 0, [2, 3]);
    r.table.replicas('t', 1, [1, 2]);
    await r.reconciler.applied(r.view.revision);
    assert.equal(r.reconciler.handleOf('t', 0), -1);
    assert.equal(r.reconciler.handleOf('t', 1), h1, 'a replica that stays stays open');
    assert.deepEqual(r.calls, [`close h${h0} delete=true`]);
    assert.deepEqual(r.removed, [join(dir, 't-0')]);
    r.table.replicas('t', 0, [2, 1]);
    await r.reconciler.applied(r.view.revision);
    const back = r.reconciler.handleOf('t', 0);
    assert.ok(back >= 0 && back !== h0);
  }));

  it('opens only the partitions the view places on this broker', inTmp(async (dir) => {
    // Each partition's only replica is its leader: partition 0 lives on broker 2, partition 1 here.
    const view = clusterView({ localId: 1, brokers: [endpoint(1), endpoint(2)], topics: [{ name: 't', partitions: 2, leader: 2, byPartition: { 1: { leader: 1 } } }] });
    const r = rig(dir, view);
    await r.reconciler.applied(view.revision);
    assert.deepEqual(r.calls.map((c) => c.split(' h')[0]), ['open t-1']);
  }));

  it('rejects the waiters of a failed pass and opens on the next change', inTmp(async (dir) => {
    const r = rig(dir);
    r.table.create('t', 1);
    r.faults.failOpens = true;
    await assert.rejects(r.reconciler.applied(r.view.revision), /disk full/);
    assert.equal(r.reconciler.handleOf('t', 0), -1);
    r.faults.failOpens = false;
    await r.reconciler.applied(r.view.revision);
    assert.ok(r.reconciler.handleOf('t', 0) >= 0);
  }));
});
