// The pure metadata controller: balanced, rack-distinct placement with spread leaders; producer-id
// blocks that never overlap across commits and controller failovers; fencing exactly when a
// session runs out, electing new leaders from the ISR left; replies only once committed and a
// revert to the committed image on losing leadership; Kafka error codes for bad requests.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { DISCONNECT_GRACE_MS, MetadataController, type ControllerReply } from '../../../../src/cluster/metadata/controller.js';
import { MetadataImage } from '../../../../src/cluster/metadata/image.js';
import { config, Harness, SESSION_MS } from '../../../helpers/controller_harness.js';
import { describeImage } from '../../../helpers/metadata_fixture.js';
import { placeBalanced, type PlacementBroker } from '../../../../src/cluster/replica_placement.js';
import { ErrorCode, KafkaError } from '../../../../src/protocol/errors.js';
import { MAX_ADMIN_ADDRESS_CHARS } from '../../../../src/cluster/metadata/records.js';

function counts(lists: readonly (readonly number[])[], ids: readonly number[], leadersOnly: boolean): number[] {
  const m = new Map(ids.map((id) => [id, 0]));
  for (const l of lists) for (const id of leadersOnly ? l.slice(0, 1) : l) m.set(id, m.get(id)! + 1);
  return [...m.values()];
}

const spread = (xs: readonly number[]): number => Math.max(...xs) - Math.min(...xs);

describe('placeBalanced', () => {
  const cluster = fc.integer({ min: 1, max: 24 }).chain((n) => fc.record({
    brokers: fc.constant(Array.from({ length: n }, (_, i) => i * 3 + 1)),
    racks: fc.integer({ min: 0, max: 5 }),
    rf: fc.integer({ min: 1, max: Math.min(n, 4) }),
    count: fc.integer({ min: 1, max: 200 }),
    rotation: fc.nat({ max: 1000 }),
  }));

  it('places distinct brokers, balances replicas and leaders to within one without racks', () => {
    fc.assert(fc.property(cluster, ({ brokers, rf, count, rotation }) => {
      const placed = placeBalanced(brokers.map((id) => ({ id, rack: null })), count, rf, rotation);
      assert.equal(placed.length, count);
      for (const l of placed) {
        assert.equal(l.length, rf);
        assert.equal(new Set(l).size, rf);
      }
      assert.ok(spread(counts(placed, brokers, false)) <= 1, 'replica counts');
      assert.ok(spread(counts(placed, brokers, true)) <= 1, 'leader counts');
    }), { numRuns: 300 });
  });

  it('puts every partition on as many racks as it can', () => {
    fc.assert(fc.property(cluster, ({ brokers, racks, rf, count, rotation }) => {
      const rackOf = (id: number): string | null => (racks === 0 ? null : `r${id % racks}`);
      const pbs: PlacementBroker[] = brokers.map((id) => ({ id, rack: rackOf(id) }));
      const rackCount = new Set(pbs.map((b) => b.rack)).size;
      for (const l of placeBalanced(pbs, count, rf, rotation)) {
        assert.equal(new Set(l.map(rackOf)).size, Math.min(rf, rackCount));
      }
    }), { numRuns: 300 });
  });

  it('refuses a replication factor beyond the brokers', () => {
    assert.throws(() => placeBalanced([{ id: 1, rack: null }], 1, 2, 0), (e: unknown) => e instanceof KafkaError && e.code === ErrorCode.INVALID_REPLICATION_FACTOR);
  });
});

describe('MetadataController', () => {
  it('hands out producer-id blocks that never overlap, across commits and failovers', () => {
    type Op = ['alloc', number] | ['commit'] | ['failover'];
    const op: fc.Arbitrary<Op> = fc.oneof(
      fc.tuple(fc.constant('alloc' as const), fc.integer({ min: 0, max: 2 })),
      fc.constant(['commit'] as Op),
      fc.constant(['failover'] as Op),
    );
    fc.assert(fc.property(fc.array(op, { maxLength: 60 }), (ops) => {
      const h = new Harness();
      h.brokers([0, 1, 2]);
      const blocks: [number, number][] = [];
      const take = (replies: readonly (ControllerReply | null)[]): void => {
        for (const r of replies) if (r?.kind === 'allocateProducerIds' && r.errorCode === ErrorCode.NONE) blocks.push([r.producerIdStart, r.producerIdStart + r.producerIdLen]);
      };
      for (const o of ops) {
        if (o[0] === 'alloc') {
          const r = h.run((next) => h.c.allocateProducerIds(o[1], h.epochs.get(o[1])!, next));
          assert.equal(typeof r, 'number', 'a block waits for its commit');
        } else if (o[0] === 'commit') {
          take(h.commitAll());
        } else {
          // The uncommitted tail is lost with leadership; the next leader's log reuses its offsets.
          const dropped = h.c.deactivate();
          h.next -= dropped.length;
          h.c.activate(2, 0);
        }
      }
      take(h.commitAll());
      blocks.sort((a, b) => a[0] - b[0]);
      for (let i = 1; i < blocks.length; i++) assert.ok(blocks[i]![0] >= blocks[i - 1]![1], `blocks ${blocks[i - 1]} and ${blocks[i]} overlap`);
      for (const [s, e] of blocks) assert.equal(e - s, 1000);
    }), { numRuns: 200 });
  });

  it('fences a broker once its session has run out, and only then, handing its leaderships to the ISR member left', () => {
    fc.assert(fc.property(fc.array(fc.integer({ min: 1, max: 2 * SESSION_MS }), { minLength: 1, maxLength: 20 }), fc.boolean(), (gaps, lastCheck) => {
      const h = new Harness();
      h.brokers([1, 2]);
      const created = h.now<Extract<ControllerReply, { kind: 'topics' }>>((next) => h.c.createTopics([{ name: 't', numPartitions: 4, replicationFactor: 2, assignment: null, configs: {} }], false, next));
      assert.equal(created.results[0]!.errorCode, ErrorCode.NONE);
      let now = 0;
      let lastBeat = 0;
      for (const gap of gaps) {
        now += gap;
        // Broker 2 heartbeats throughout; broker 1 only when asked to.
        h.now((next) => h.c.heartbeat({ brokerId: 2, brokerEpoch: h.epochs.get(2)!, currentMetadataOffset: h.next, wantFence: false, wantShutDown: false, warm: true }, next, now));
        const out = h.c.expireSessions(h.next, now);
        if (now - lastBeat > SESSION_MS) {
          assert.ok(out !== null && out.kind === 'propose', `fenced at ${now - lastBeat} ms after the last heartbeat`);
          h.next++;
          h.commitAll();
          const t = h.c.image.topicsByName.get('t')!;
          for (let p = 0; p < t.table.count; p++) {
            assert.notEqual(t.table.leader(p), 1);
            assert.deepStrictEqual(t.table.isr(p), [2]);
            // Broker 2, the ISR member left, leads every partition.
            assert.equal(t.table.leader(p), 2);
          }
          assert.equal(h.c.image.brokers.get(1)!.fenced, true);
          assert.equal(h.c.expireSessions(h.next, now), null, 'a fenced broker is fenced once');
          return;
        }
        assert.equal(out, null, `not fenced at ${now - lastBeat} ms`);
        if (lastCheck) {
          h.now((next) => h.c.heartbeat({ brokerId: 1, brokerEpoch: h.epochs.get(1)!, currentMetadataOffset: h.next, wantFence: false, wantShutDown: false, warm: true }, next, now));
          lastBeat = now;
        }
      }
    }), { numRuns: 200 });
  });

  it('names in nextTimedWork the first moment a session runs out: expiry finds nothing before it and fences at it', () => {
    // A lone voter's quorum driver sleeps until nextTimedWork (issue 16): it must be neither late nor absent.
    type Op = readonly ['beat' | 'disconnect', 1 | 2, number];
    const op = fc.tuple(fc.constantFrom('beat' as const, 'disconnect' as const), fc.constantFrom(1 as const, 2 as const), fc.integer({ min: 0, max: SESSION_MS }));
    fc.assert(fc.property(fc.array(op, { maxLength: 12 }), (ops: Op[]) => {
      const h = new Harness();
      h.brokers([1, 2]);
      let now = 0;
      for (const [kind, id, gap] of ops) {
        now += gap;
        // Only while nothing ran out yet: past that the driver would have fenced already.
        if (h.c.nextTimedWork() <= now) break;
        if (kind === 'beat') h.now((next) => h.c.heartbeat({ brokerId: id, brokerEpoch: h.epochs.get(id)!, currentMetadataOffset: h.next, wantFence: false, wantShutDown: false, warm: true }, next, now));
        else h.c.endSession(id, h.epochs.get(id)!, now);
      }
      const at = h.c.nextTimedWork();
      assert.ok(Number.isFinite(at), 'two unfenced brokers with sessions: a deadline');
      assert.equal(h.c.expireSessions(h.next, at - 1), null, `nothing runs out before ${at}`);
      assert.equal(h.c.expireSessions(h.next, at)?.kind, 'propose', `a session runs out at ${at}`);
    }), { numRuns: 300 });
    const idle = new Harness();
    assert.equal(idle.c.nextTimedWork(), Infinity, 'no brokers, no balance check: nothing timed');
  });

  it('ends the session of a broker whose connection closed after a short grace, for that incarnation only; a heartbeat meanwhile keeps it', () => {
    const h = new Harness();
    h.brokers([1, 2]);
    h.now((next) => h.c.createTopics([{ name: 't', numPartitions: 2, replicationFactor: 2, assignment: null, configs: {} }], false, next));
    const beat = (id: number, at: number) => h.now((next) => h.c.heartbeat({ brokerId: id, brokerEpoch: h.epochs.get(id)!, currentMetadataOffset: h.next, wantFence: false, wantShutDown: false, warm: true }, next, at));
    beat(1, 10);
    beat(2, 10);
    const grace = Math.min(DISCONNECT_GRACE_MS, SESSION_MS);
    h.c.endSession(1, h.epochs.get(1)! + 1, 20);
    assert.equal(h.c.expireSessions(h.next, 21 + grace), null, 'another incarnation\'s connection says nothing of this one');
    h.c.endSession(1, h.epochs.get(1)!, 20);
    beat(1, 30);
    beat(2, 30);
    assert.equal(h.c.expireSessions(h.next, 31 + grace), null, 'a heartbeat after the disconnect restores the session');
    h.c.endSession(1, h.epochs.get(1)!, 40);
    assert.equal(h.c.expireSessions(h.next, 40 + grace), null, 'not before the grace');
    const out = h.c.expireSessions(h.next, 41 + grace);
    assert.equal(out?.kind, 'propose', 'fenced long before the session timeout');
    h.next++;
    h.commitAll();
    assert.equal(h.c.image.brokers.get(1)!.fenced, true);
    const t = h.c.image.topicsByName.get('t')!;
    assert.deepStrictEqual([t.table.leader(0), t.table.leader(1)], [2, 2]);
  });

  it('a new controller gives the node that led before only the disconnect grace, every other broker a full session', () => {
    const h = new Harness();
    h.brokers([1, 2, 3]);
    h.now((next) => h.c.createTopics([{ name: 't', numPartitions: 3, replicationFactor: 3, assignment: null, configs: {} }], false, next));
    const successor = new MetadataController(config(), MetadataImage.EMPTY);
    for (const { offset, records } of h.log) successor.replay(records, offset, 1);
    const at = 1_000;
    successor.activate(2, at, 1);
    const grace = Math.min(DISCONNECT_GRACE_MS, SESSION_MS);
    assert.equal(successor.expireSessions(h.next, at + grace), null, 'not before the grace');
    const out = successor.expireSessions(h.next, at + grace + 1);
    assert.ok(out !== null && out.kind === 'propose', 'the previous leader is fenced after the grace');
    const fenced = out.records.flatMap((r) => (r.type === 'brokerRegistrationChange' ? [r.brokerId] : []));
    assert.deepEqual(fenced, [1], 'only the previous leader is fenced');
    successor.committed(h.next);
    assert.equal(successor.expireSessions(h.next + 1, at + SESSION_MS), null, 'the others keep a full session');
  });

  it('ends at once the session of a node whose process refuses connections, and only a live, unfenced one', () => {
    const h = new Harness();
    h.brokers([1, 2, 3]);
    h.now((next) => h.c.createTopics([{ name: 't', numPartitions: 3, replicationFactor: 3, assignment: null, configs: {} }], false, next));
    const successor = new MetadataController(config(), MetadataImage.EMPTY);
    for (const { offset, records } of h.log) successor.replay(records, offset, 1);
    assert.equal(successor.processGone(1, 900), false, 'an inactive controller ends no session');
    const at = 1_000;
    successor.activate(2, at, 1);
    assert.equal(successor.processGone(1, at), true);
    assert.equal(successor.processGone(9, at), false, 'an unknown node');
    const epoch2 = successor.image.brokers.get(2)!.epoch;
    assert.equal(successor.processGone(2, at, epoch2 + 1), false, 'another incarnation of broker 2 keeps its session');
    const out = successor.expireSessions(h.next, at);
    assert.ok(out !== null && out.kind === 'propose', 'fenced without waiting for the grace');
    assert.deepEqual(out.records.flatMap((r) => (r.type === 'brokerRegistrationChange' ? [r.brokerId] : [])), [1]);
    successor.committed(h.next);
    assert.equal(successor.processGone(1, at + 1), false, 'a fenced broker has no session to end');
    assert.equal(successor.expireSessions(h.next + 1, at + 1), null, 'the others keep their sessions');
  });

  it('unfences only a broker that has caught up to its registration, and gives back its leaderless partitions', () => {
    const h = new Harness();
    h.brokers([1]);
    h.now((next) => h.c.createTopics([{ name: 't', numPartitions: 2, replicationFactor: 1, assignment: null, configs: {} }], false, next));
    const out = h.c.expireSessions(h.next, SESSION_MS + 1);
    assert.equal(out?.kind, 'propose');
    h.next++;
    h.commitAll();
    assert.equal(h.c.image.topicsByName.get('t')!.table.leader(0), -1);
    const reg = h.now<Extract<ControllerReply, { kind: 'registerBroker' }>>((next) => h.c.registerBroker({ brokerId: 1, incarnationId: 'f'.repeat(32), rack: null, endpoints: [{ name: 'PLAINTEXT', host: 'b1', port: 1, securityProtocol: 0 }] }, next, 0));
    const behind = h.now<Extract<ControllerReply, { kind: 'heartbeat' }>>((next) => h.c.heartbeat({ brokerId: 1, brokerEpoch: reg.brokerEpoch, currentMetadataOffset: reg.brokerEpoch - 1, wantFence: false, wantShutDown: false, warm: true }, next, 0));
    assert.deepStrictEqual([behind.isFenced, behind.isCaughtUp], [true, false]);
    const caughtUp = h.now<Extract<ControllerReply, { kind: 'heartbeat' }>>((next) => h.c.heartbeat({ brokerId: 1, brokerEpoch: reg.brokerEpoch, currentMetadataOffset: reg.brokerEpoch, wantFence: false, wantShutDown: false, warm: true }, next, 0));
    assert.deepStrictEqual([caughtUp.isFenced, caughtUp.isCaughtUp], [false, true]);
    const t = h.c.image.topicsByName.get('t')!;
    assert.deepStrictEqual([t.table.leader(0), t.table.leader(1)], [1, 1]);
    assert.deepStrictEqual([t.table.leaderEpoch(0), t.table.leaderEpoch(1)], [2, 2]);
  });

  it('keeps the admin address a broker registers with, and refuses one past its bound', () => {
    const h = new Harness();
    const register = (adminAddress: string | null | undefined): ControllerReply | number => h.run((next) => h.c.registerBroker({
      brokerId: 5, incarnationId: 'e'.repeat(32), rack: null, endpoints: [{ name: 'P', host: 'h', port: 1, securityProtocol: 0 }], adminAddress,
    }, next, 0));
    const codeOf = (r: ControllerReply | number): number => (typeof r === 'number' || !('errorCode' in r) ? ErrorCode.NONE : r.errorCode);
    assert.equal(codeOf(register('h:8080')), ErrorCode.NONE);
    h.commitAll();
    assert.equal(h.c.image.brokers.get(5)!.adminAddress, 'h:8080');
    assert.equal(codeOf(register(undefined)), ErrorCode.NONE);
    h.commitAll();
    assert.equal(h.c.image.brokers.get(5)!.adminAddress, null, 'a registration without one (an older broker) has none');
    assert.equal(codeOf(register(`${'h'.repeat(MAX_ADMIN_ADDRESS_CHARS)}:1`)), ErrorCode.INVALID_REQUEST);
  });

  it('answers only once the batch commits and reverts to the committed image on losing leadership', () => {
    const h = new Harness();
    h.brokers([1, 2, 3]);
    const committedBefore = h.c.committedImage;
    const offset = h.run((next) => h.c.createTopics([{ name: 'a', numPartitions: 6, replicationFactor: 3, assignment: null, configs: { 'retention.ms': '5' } }], false, next));
    assert.equal(typeof offset, 'number');
    assert.ok(h.c.image.topicsByName.has('a'), 'the working image has the topic at once');
    const again = h.run((next) => h.c.createTopics([{ name: 'a', numPartitions: 1, replicationFactor: 1, assignment: null, configs: {} }], false, next));
    assert.equal(typeof again === 'object' && again.kind === 'topics' && again.results[0]!.errorCode, ErrorCode.TOPIC_ALREADY_EXISTS);
    assert.deepStrictEqual(h.c.committed((offset as number) - 1), []);
    assert.deepStrictEqual(h.c.deactivate(), [offset]);
    assert.equal(h.c.image, committedBefore);
    assert.equal(h.c.image.topicsByName.has('a'), false);
    const refused = h.run((next) => h.c.createTopics([{ name: 'b', numPartitions: 1, replicationFactor: 1, assignment: null, configs: {} }], false, next));
    assert.equal(typeof refused === 'object' && refused.kind === 'topics' && refused.results[0]!.errorCode, ErrorCode.NOT_CONTROLLER);
  });

  it('refuses bad requests with Kafka error codes', () => {
    const h = new Harness(config({ maxPendingBatches: 2, maxBrokers: 3 }));
    const epochs = h.brokers([1, 2]);
    const topic = (over: object): number => {
      const r = h.run((next) => h.c.createTopics([{ name: 'x', numPartitions: 1, replicationFactor: 1, assignment: null, configs: {}, ...over }], true, next));
      assert.ok(typeof r === 'object' && r.kind === 'topics');
      return r.results[0]!.errorCode;
    };
    assert.equal(topic({ replicationFactor: 3 }), ErrorCode.INVALID_REPLICATION_FACTOR);
    assert.equal(topic({ replicationFactor: 0 }), ErrorCode.INVALID_REPLICATION_FACTOR);
    assert.equal(topic({ numPartitions: 0 }), ErrorCode.INVALID_PARTITIONS);
    assert.equal(topic({ name: 'bad/name' }), ErrorCode.INVALID_TOPIC_EXCEPTION);
    assert.equal(topic({ configs: { bad: '1' } }), ErrorCode.INVALID_CONFIG);
    assert.equal(topic({ numPartitions: -1, replicationFactor: -1, assignment: [[1, 1]] }), ErrorCode.INVALID_REPLICA_ASSIGNMENT);
    assert.equal(topic({ numPartitions: -1, replicationFactor: -1, assignment: [[9]] }), ErrorCode.INVALID_REPLICA_ASSIGNMENT);
    assert.equal(topic({ numPartitions: 200_000 }), ErrorCode.POLICY_VIOLATION);
    assert.equal(topic({}), ErrorCode.NONE);
    const code = (r: ControllerReply | number): number => (typeof r === 'number' ? ErrorCode.NONE : 'errorCode' in r ? r.errorCode : -99);
    assert.equal(code(h.run((next) => h.c.heartbeat({ brokerId: 1, brokerEpoch: epochs.get(1)! + 100, currentMetadataOffset: 0, wantFence: false, wantShutDown: false, warm: true }, next, 0))), ErrorCode.STALE_BROKER_EPOCH);
    assert.equal(code(h.run((next) => h.c.heartbeat({ brokerId: 7, brokerEpoch: 0, currentMetadataOffset: 0, wantFence: false, wantShutDown: false, warm: true }, next, 0))), ErrorCode.BROKER_ID_NOT_REGISTERED);
    assert.equal(code(h.run((next) => h.c.allocateProducerIds(1, epochs.get(1)! - 1, next))), ErrorCode.STALE_BROKER_EPOCH);
    assert.equal(code(h.run((next) => h.c.alterConfigs({ resourceType: 2, resourceName: 'nope', mode: 'incremental', validateOnly: false, changes: [{ name: 'retention.ms', op: 0, value: '1' }] }, next))), ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    assert.equal(code(h.run((next) => h.c.alterConfigs({ resourceType: 4, resourceName: '01', mode: 'incremental', validateOnly: false, changes: [{ name: 'k', op: 0, value: '1' }] }, next))), ErrorCode.INVALID_REQUEST);
    const reg = (id: number): number => code(h.run((next) => h.c.registerBroker({ brokerId: id, incarnationId: 'c'.repeat(32), rack: null, endpoints: [{ name: 'P', host: 'h', port: 1, securityProtocol: 0 }] }, next, 0)));
    assert.equal(reg(-1), ErrorCode.INVALID_REQUEST);
    assert.equal(reg(3), ErrorCode.NONE);
    // Two batches await commit now (the bound): the next request is refused, not queued.
    assert.equal(code(h.run((next) => h.c.allocateProducerIds(1, epochs.get(1)!, next))), ErrorCode.NONE);
    assert.equal(code(h.run((next) => h.c.allocateProducerIds(1, epochs.get(1)!, next))), ErrorCode.REQUEST_TIMED_OUT);
    h.commitAll();
    assert.equal(reg(4), ErrorCode.POLICY_VIOLATION);
  });

  it('deletes topics, grows them with balanced placement and alters their configs', () => {
    const h = new Harness();
    h.brokers([1, 2, 3, 4]);
    h.now((next) => h.c.createTopics([{ name: 'a', numPartitions: 2, replicationFactor: 2, assignment: null, configs: {} }], false, next));
    const grown = h.now<Extract<ControllerReply, { kind: 'topics' }>>((next) => h.c.createPartitions([{ name: 'a', count: 10, assignment: null }, { name: 'zz', count: 3, assignment: null }], false, next));
    assert.deepStrictEqual(grown.results.map((r) => r.errorCode), [ErrorCode.NONE, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]);
    const t = h.c.image.topicsByName.get('a')!;
    assert.equal(t.partitions, 10);
    for (let p = 0; p < 10; p++) assert.equal(t.table.replicas(p).length, 2);
    const cfg = h.now<Extract<ControllerReply, { kind: 'alterConfigs' }>>((next) => h.c.alterConfigs({ resourceType: 2, resourceName: 'a', mode: 'incremental', validateOnly: false, changes: [{ name: 'retention.ms', op: 0, value: '7' }] }, next));
    assert.equal(cfg.errorCode, ErrorCode.NONE);
    assert.deepStrictEqual(h.c.image.topicsByName.get('a')!.configs, { 'retention.ms': '7' });
    const deleted = h.now<Extract<ControllerReply, { kind: 'topics' }>>((next) => h.c.deleteTopics(['a', 'a', 'b'], next));
    assert.deepStrictEqual(deleted.results.map((r) => r.errorCode), [ErrorCode.NONE, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]);
    assert.equal(h.c.image.topicsByName.size, 0);
    assert.equal(h.c.image.configs.size, 0);
  });

  it('replays committed batches as a standby and takes over from them; unregisters brokers', () => {
    const h = new Harness();
    h.brokers([1, 2]);
    h.now((next) => h.c.createTopics([{ name: 'a', numPartitions: 4, replicationFactor: 2, assignment: null, configs: {} }], false, next));
    const gone = h.now<Extract<ControllerReply, { kind: 'unregisterBroker' }>>((next) => h.c.unregisterBroker(1, next));
    assert.equal(gone.errorCode, ErrorCode.NONE);
    assert.equal(h.c.image.brokers.has(1), false);
    const t = h.c.image.topicsByName.get('a')!;
    for (let p = 0; p < 4; p++) {
      assert.deepStrictEqual(t.table.isr(p), [2]);
      assert.notEqual(t.table.leader(p), 1);
    }
    const again = h.now<Extract<ControllerReply, { kind: 'unregisterBroker' }>>((next) => h.c.unregisterBroker(1, next));
    assert.equal(again.errorCode, ErrorCode.BROKER_ID_NOT_REGISTERED);

    const standby = new MetadataController(config(), MetadataImage.EMPTY);
    for (const { offset, records } of h.log) standby.replay(records, offset, 1);
    assert.deepStrictEqual(describeImage(standby.image), describeImage(h.c.committedImage));
    const refused = standby.allocateProducerIds(2, h.epochs.get(2)!, h.next);
    assert.ok(refused.kind === 'answered' && refused.reply.kind === 'allocateProducerIds' && refused.reply.errorCode === ErrorCode.NOT_CONTROLLER);
    standby.activate(2, 0);
    assert.equal(standby.allocateProducerIds(2, h.epochs.get(2)!, h.next).kind, 'propose');
    assert.throws(() => standby.replay([], h.next + 1, 2));
  });
});
