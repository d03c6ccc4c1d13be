// The controller's side of a joining broker's warm-up: a broker registering with a cluster that
// holds topics is warming (the cluster's first brokers and restarts are not); a warming broker
// leads only where no warm replica can (elections, new partitions, preferred elections and the
// imbalance check pass it over); its heartbeat saying it is warm ends the state and hands it the
// leaderships it is preferred for. Over random partitions, elect() never picks a warming broker
// while a warm eligible ISR member exists and always picks one when any eligible member exists.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { ControllerReply } from '../../../../src/cluster/metadata/controller.js';
import { elect, ElectionType } from '../../../../src/cluster/metadata/replication_control.js';
import { NO_LEADER } from '../../../../src/cluster/metadata/records.js';
import { ErrorCode } from '../../../../src/protocol/errors.js';
import { Harness } from '../../../helpers/controller_harness.js';

type Reply<K extends ControllerReply['kind']> = Extract<ControllerReply, { kind: K }>;

function register(h: Harness, id: number, incarnation = id): void {
  const r = h.now<Reply<'registerBroker'>>((next) => h.c.registerBroker({
    brokerId: id, incarnationId: (incarnation + 1).toString(16).padStart(32, 'b'), rack: null,
    endpoints: [{ name: 'PLAINTEXT', host: `b${id}`, port: 9092, securityProtocol: 0 }],
  }, next, 0));
  assert.equal(r.errorCode, ErrorCode.NONE);
  h.epochs.set(id, r.brokerEpoch);
}

function beat(h: Harness, id: number, warm: boolean): Reply<'heartbeat'> {
  return h.now<Reply<'heartbeat'>>((next) => h.c.heartbeat({
    brokerId: id, brokerEpoch: h.epochs.get(id)!, currentMetadataOffset: h.next, wantFence: false, wantShutDown: false, warm,
  }, next, 0));
}

function create(h: Harness, name: string, assignment: number[][]): void {
  const r = h.now<Reply<'topics'>>((next) => h.c.createTopics([{ name, numPartitions: -1, replicationFactor: -1, assignment, configs: {} }], false, next));
  assert.equal(r.results[0]!.errorCode, ErrorCode.NONE, r.results[0]!.message ?? '');
}

function leader(h: Harness, topic: string, p = 0): number {
  return h.c.image.topicsByName.get(topic)!.table.leader(p);
}

function warming(h: Harness, id: number): boolean {
  return h.c.image.brokers.get(id)!.warming;
}

/** Brokers 1-3 start an empty cluster; topic 'a' exists; broker 4 joins, unfenced but warming. */
function joined(): Harness {
  const h = new Harness();
  h.brokers([1, 2, 3]);
  create(h, 'a', [[1, 2, 3]]);
  register(h, 4);
  assert.equal(beat(h, 4, false).isFenced, false);
  return h;
}

describe('a joining broker warms up before it leads', () => {
  it('is warming when it joins a cluster with topics; the first brokers are not; a restart keeps the state', () => {
    const h = joined();
    assert.deepEqual([1, 2, 3].map((id) => warming(h, id)), [false, false, false]);
    assert.equal(warming(h, 4), true);
    register(h, 4, 40);
    assert.equal(warming(h, 4), true, 'a restarted warming broker still warms');
    register(h, 1, 10);
    assert.equal(warming(h, 1), false, 'a restarted warm broker stays warm');
  });

  it('leads a new partition only when every replica warms; preferred elections and the imbalance check pass it over', () => {
    const h = joined();
    create(h, 'b', [[4, 1, 2]]);
    create(h, 'c', [[4]]);
    assert.equal(leader(h, 'b'), 1, 'the first warm replica leads');
    assert.equal(leader(h, 'c'), 4, 'alone, the warming broker leads');
    const e = h.now<Reply<'electLeaders'>>((next) => h.c.electLeaders(ElectionType.PREFERRED, [{ topic: 'b', partitions: [0] }], next));
    assert.equal(e.results[0]!.errorCode, ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE);
    assert.match(e.results[0]!.message ?? '', /warming/);
    assert.equal(h.c.balanceLeaders(h.next, Number.MAX_SAFE_INTEGER), null, 'nothing to balance while 4 warms');
  });

  it('is passed over by an election while a warm ISR member can lead, and leads when none can', () => {
    const h = joined();
    create(h, 'b', [[1, 4, 2]]);
    create(h, 'c', [[1, 4]]);
    h.now((next) => h.c.heartbeat({ brokerId: 1, brokerEpoch: h.epochs.get(1)!, currentMetadataOffset: h.next, wantFence: true, wantShutDown: false, warm: true }, next, 0));
    assert.equal(leader(h, 'b'), 2, 'warm 2 rather than warming 4, although 4 comes first');
    assert.equal(leader(h, 'c'), 4, 'warming 4 rather than no leader');
  });

  it('is warm once its heartbeat says so, and takes the leaderships it is preferred for', () => {
    const h = joined();
    create(h, 'b', [[4, 1, 2], [2, 4, 1]]);
    const before = h.c.image.topicsByName.get('b')!.table.leaderEpoch(0);
    assert.equal(beat(h, 4, true).isFenced, false);
    assert.equal(warming(h, 4), false);
    assert.equal(leader(h, 'b', 0), 4);
    assert.equal(h.c.image.topicsByName.get('b')!.table.leaderEpoch(0), before + 1);
    assert.equal(leader(h, 'b', 1), 2, 'partitions preferring others keep their leader');
  });

  it('a warm report while fenced unfences it warm in one batch', () => {
    const h = new Harness();
    h.brokers([1]);
    create(h, 'a', [[1]]);
    register(h, 2);
    const offset = h.next;
    assert.equal(beat(h, 2, true).isFenced, false);
    assert.equal(warming(h, 2), false);
    assert.equal(h.log.filter((b) => b.offset >= offset).length, 1);
  });
});

describe('elect() and warming brokers', () => {
  it('never picks a warming broker while a warm eligible ISR member exists, and picks someone when any eligible member exists', () => {
    const ids = fc.uniqueArray(fc.integer({ min: 1, max: 8 }), { minLength: 1, maxLength: 5 });
    fc.assert(fc.property(ids, fc.func(fc.boolean()), fc.func(fc.boolean()), fc.func(fc.boolean()), (replicas, inIsr, eligibleOf, warmingOf) => {
      const isr = replicas.filter((r) => inIsr(r));
      if (isr.length === 0) return;
      const s = { replicas, isr, removingReplicas: [], addingReplicas: [], leader: NO_LEADER, leaderEpoch: 0, partitionEpoch: 0 };
      const t = elect(s, isr, (id) => eligibleOf(id), false, (id) => warmingOf(id));
      const candidates = isr.filter((r) => eligibleOf(r));
      if (candidates.length === 0) return assert.equal(t.leader, NO_LEADER);
      assert.ok(candidates.includes(t.leader));
      if (candidates.some((r) => !warmingOf(r))) assert.equal(warmingOf(t.leader), false, `picked warming ${t.leader} of ${candidates}`);
    }), { numRuns: 500 });
  });
});
