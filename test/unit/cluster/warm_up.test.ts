// A warming broker's own judgement (cluster/warm_up.ts): it waits while fenced or hosting
// nothing, catches up until every replica it hosts is in its ISR, then reads its replicas' log
// tails once (an equal share of the budget each) and only then reports itself ready; a broker
// registered warm reports nothing to do. The log-tail reader reads newest bytes first, up to the
// budget, and counts a vanished directory as nothing to read.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ControllerReply } from '../../../src/cluster/metadata/controller.js';
import { WarmUp } from '../../../src/cluster/warm_up.js';
import { readLogTail } from '../../../src/log/log_tail.js';
import { ErrorCode } from '../../../src/protocol/errors.js';
import { Harness } from '../../helpers/controller_harness.js';

type Reply<K extends ControllerReply['kind']> = Extract<ControllerReply, { kind: K }>;

const quiet = { info: () => {}, warn: () => {} };

/** Brokers 1-2 hold topic 'a'; broker 3 joins (warming); topic 'b' puts a replica on it, out of the ISR when `inIsr` is false. */
function cluster(): { h: Harness; joinBroker(): void; placeOn3(inIsr: boolean): void } {
  const h = new Harness();
  h.brokers([1, 2]);
  const create = (name: string, assignment: number[][]): void => {
    const r = h.now<Reply<'topics'>>((next) => h.c.createTopics([{ name, numPartitions: -1, replicationFactor: -1, assignment, configs: {} }], false, next));
    assert.equal(r.results[0]!.errorCode, ErrorCode.NONE);
  };
  create('a', [[1, 2]]);
  return {
    h,
    joinBroker() {
      const r = h.now<Reply<'registerBroker'>>((next) => h.c.registerBroker({
        brokerId: 3, incarnationId: 'c'.repeat(32), rack: null, endpoints: [{ name: 'PLAINTEXT', host: 'b3', port: 9092, securityProtocol: 0 }],
      }, next, 0));
      h.epochs.set(3, r.brokerEpoch);
    },
    placeOn3(inIsr: boolean) {
      create('b', [[1, 3], [2, 3]]);
      if (inIsr) return;
      // Broker 1 (partition 0's leader) shrinks its ISR to itself: 3 is behind.
      const t = h.c.image.topicsByName.get('b')!;
      const r = h.now<Reply<'alterPartition'>>((next) => h.c.alterPartition({
        brokerId: 1, brokerEpoch: h.epochs.get(1)!, topics: [{ topicId: t.id, topicName: null, partitions: [{
          partition: 0, leaderEpoch: t.table.leaderEpoch(0), partitionEpoch: t.table.state(0).partitionEpoch, newIsr: [{ brokerId: 1, brokerEpoch: -1 }], leaderRecoveryState: 0,
        }] }],
      }, next));
      assert.equal(r.topics[0]!.partitions[0]!.errorCode, ErrorCode.NONE);
    },
  };
}

function unfence(h: Harness, id: number): void {
  h.now((next) => h.c.heartbeat({ brokerId: id, brokerEpoch: h.epochs.get(id)!, currentMetadataOffset: h.next, wantFence: false, wantShutDown: false, warm: false }, next, 0));
}

async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
}

describe('WarmUp', () => {
  it('waits while unregistered, fenced or hosting nothing; catches up; reads once; then is ready', async () => {
    const c = cluster();
    const reads: [string, number, number][] = [];
    const view = { localId: 3, get image() { return c.h.c.image; } };
    const w = new WarmUp(view, async (topic, partition, maxBytes) => {
      reads.push([topic, partition, maxBytes]);
      return 100;
    }, 1000, quiet);
    assert.equal(w.progress().state, 'waiting', 'not registered');
    c.joinBroker();
    assert.equal(w.progress().state, 'waiting', 'fenced');
    unfence(c.h, 3);
    assert.equal(w.progress().state, 'waiting', 'hosts nothing');
    c.placeOn3(false);
    assert.deepEqual(w.progress(), { state: 'catching-up', replicas: 2, inSync: 1, bytesRead: 0, bytesTarget: 0 });
    assert.equal(w.ready(), false);
    assert.equal(reads.length, 0, 'no read before every replica is in sync');
    // Broker 1 takes 3 back into the ISR.
    const t = c.h.c.image.topicsByName.get('b')!;
    c.h.now((next) => c.h.c.alterPartition({
      brokerId: 1, brokerEpoch: c.h.epochs.get(1)!, topics: [{ topicId: t.id, topicName: null, partitions: [{
        partition: 0, leaderEpoch: t.table.leaderEpoch(0), partitionEpoch: t.table.state(0).partitionEpoch,
        newIsr: [{ brokerId: 1, brokerEpoch: -1 }, { brokerId: 3, brokerEpoch: -1 }], leaderRecoveryState: 0,
      }] }],
    }, next));
    assert.equal(w.ready(), false, 'reading');
    await settle();
    assert.deepEqual(reads, [['b', 0, 500], ['b', 1, 500]]);
    assert.deepEqual(w.progress(), { state: 'ready', replicas: 2, inSync: 2, bytesRead: 200, bytesTarget: 1000 });
    assert.equal(w.ready(), true);
    w.ready();
    assert.equal(reads.length, 2, 'read once');
  });

  it('has nothing to do on a broker registered warm', () => {
    const c = cluster();
    const w = new WarmUp({ localId: 1, get image() { return c.h.c.image; } }, async () => assert.fail('no read'), 1000, quiet);
    assert.equal(w.progress().state, 'warm');
    assert.equal(w.ready(), false, 'nothing to report');
  });

  it('with no read budget is ready as soon as its replicas are in sync; a failed read counts as read', async () => {
    const c = cluster();
    c.joinBroker();
    unfence(c.h, 3);
    c.placeOn3(true);
    const image = { localId: 3, get image() { return c.h.c.image; } };
    assert.equal(new WarmUp(image, async () => assert.fail('no read'), 0, quiet).ready(), true);
    const failing = new WarmUp(image, async () => { throw new Error('EIO'); }, 10, quiet);
    assert.equal(failing.ready(), false);
    await settle();
    assert.equal(failing.ready(), true);
  });
});

describe('readLogTail', () => {
  it('reads newest segments first up to the budget; a missing directory reads nothing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-tail-'));
    writeFileSync(join(dir, '00000000000000000000.log'), Buffer.alloc(3000));
    writeFileSync(join(dir, '00000000000000000100.log'), Buffer.alloc(1000));
    writeFileSync(join(dir, '00000000000000000100.index'), Buffer.alloc(5000));
    assert.equal(await readLogTail(dir, 100_000), 4000, 'every .log byte, no index');
    assert.equal(await readLogTail(dir, 2500), 2500);
    assert.equal(await readLogTail(join(dir, 'gone'), 100), 0);
  });
});
