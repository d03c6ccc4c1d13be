// The controller side of replication: leader election from the ISR when a broker is fenced,
// shuts down, re-registers or unregisters; controlled shutdown granted only once every other
// unfenced broker has applied the move; a returning last ISR member leading again;
// AlterPartition's checks in KRaft's order and its compare-and-set partition epoch; preferred
// and unclean ElectLeaders; the periodic imbalance check; and, over random event sequences,
// the invariants every image keeps (leader in ISR, ISR within replicas and never empty, epochs
// that only grow and bump on every change, no ineligible leader, no unclean election unless
// allowed).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { ControllerReply } from '../../../../src/cluster/metadata/controller.js';
import type { MetadataImage } from '../../../../src/cluster/metadata/image.js';
import { ElectionType, type AlterPartitionData, type ElectionResult } from '../../../../src/cluster/metadata/replication_control.js';
import { ErrorCode } from '../../../../src/protocol/errors.js';
import { config, Harness } from '../../../helpers/controller_harness.js';

type Reply<K extends ControllerReply['kind']> = Extract<ControllerReply, { kind: K }>;

/** A harness with brokers 1..n unfenced and topic 't' placed by `assignment`. */
function cluster(n: number, assignment: number[][], configs: Record<string, string> = {}, h = new Harness()): Harness {
  h.brokers(Array.from({ length: n }, (_, i) => i + 1));
  const r = h.now<Reply<'topics'>>((next) => h.c.createTopics([{ name: 't', numPartitions: -1, replicationFactor: -1, assignment, configs }], false, next));
  assert.equal(r.results[0]!.errorCode, ErrorCode.NONE);
  return h;
}

function state(h: Harness, p = 0): { leader: number; isr: readonly number[]; leaderEpoch: number; partitionEpoch: number } {
  const s = h.c.image.topicsByName.get('t')!.table.state(p);
  return { leader: s.leader, isr: s.isr, leaderEpoch: s.leaderEpoch, partitionEpoch: s.partitionEpoch };
}

function beat(h: Harness, id: number, flags: { wantFence?: boolean; wantShutDown?: boolean } = {}, now = 0): Reply<'heartbeat'> {
  return h.now<Reply<'heartbeat'>>((next) => h.c.heartbeat({
    brokerId: id, brokerEpoch: h.epochs.get(id)!, currentMetadataOffset: h.next, wantFence: flags.wantFence ?? false, wantShutDown: flags.wantShutDown ?? false, warm: true,
  }, next, now));
}

/** Re-registers broker `id` as a new incarnation (fenced until it heartbeats caught up). */
function restart(h: Harness, id: number, incarnation: number): void {
  const r = h.now<Reply<'registerBroker'>>((next) => h.c.registerBroker({
    brokerId: id, incarnationId: incarnation.toString(16).padStart(32, 'c'), rack: null,
    endpoints: [{ name: 'PLAINTEXT', host: `b${id}`, port: 9092, securityProtocol: 0 }],
  }, next, 0));
  assert.equal(r.errorCode, ErrorCode.NONE);
  h.epochs.set(id, r.brokerEpoch);
}

function alter(h: Harness, brokerId: number, d: Partial<AlterPartitionData> & { isr: number[] }, topic: { topicId?: string | null; topicName?: string | null } = {}): Reply<'alterPartition'> {
  const s = state(h, d.partition ?? 0);
  const t = h.c.image.topicsByName.get('t')!;
  return h.now<Reply<'alterPartition'>>((next) => h.c.alterPartition({
    brokerId, brokerEpoch: h.epochs.get(brokerId) ?? 0,
    topics: [{
      topicId: topic.topicId === undefined ? t.id : topic.topicId, topicName: topic.topicName ?? null,
      partitions: [{
        partition: d.partition ?? 0, leaderEpoch: d.leaderEpoch ?? s.leaderEpoch, partitionEpoch: d.partitionEpoch ?? s.partitionEpoch,
        newIsr: d.newIsr ?? d.isr.map((id) => ({ brokerId: id, brokerEpoch: -1 })), leaderRecoveryState: d.leaderRecoveryState ?? 0,
      }],
    }],
  }, next));
}

function elect(h: Harness, type: number, partitions: { topic: string; partitions: number[] }[] | null): readonly ElectionResult[] {
  const r = h.now<Reply<'electLeaders'>>((next) => h.c.electLeaders(type, partitions, next));
  assert.equal(r.errorCode, ErrorCode.NONE);
  return r.results;
}

describe('leader election from the ISR', () => {
  it('hands a fenced leader\'s partitions to the first eligible ISR member in replica order, bumping both epochs', () => {
    const h = cluster(3, [[1, 2, 3], [2, 3, 1], [3, 1, 2]]);
    const before = state(h, 0);
    beat(h, 1, { wantFence: true });
    assert.deepStrictEqual(state(h, 0), { leader: 2, isr: [2, 3], leaderEpoch: before.leaderEpoch + 1, partitionEpoch: before.partitionEpoch + 1 });
    // A follower's fencing shrinks the ISR only: partition epoch +1, leader epoch as it was.
    assert.deepStrictEqual(state(h, 1), { leader: 2, isr: [2, 3], leaderEpoch: 0, partitionEpoch: 1 });
    assert.deepStrictEqual(state(h, 2), { leader: 3, isr: [3, 2], leaderEpoch: 0, partitionEpoch: 1 });
  });

  it('keeps the last ISR member in the ISR of a leaderless partition and gives it the leadership back when it returns, without rejoining other ISRs', () => {
    const h = cluster(2, [[1, 2], [2, 1]]);
    beat(h, 2, { wantFence: true });
    assert.deepStrictEqual([state(h, 0).isr, state(h, 1).leader], [[1], 1]);
    beat(h, 1, { wantFence: true });
    assert.deepStrictEqual([state(h, 0).leader, state(h, 0).isr], [-1, [1]]);
    const fencedEpoch = state(h, 0).leaderEpoch;
    // Broker 2 returns first: it is no ISR member, so without unclean election nothing changes.
    beat(h, 2);
    assert.deepStrictEqual([state(h, 0).leader, state(h, 1).leader], [-1, -1]);
    beat(h, 1);
    assert.deepStrictEqual([state(h, 0).leader, state(h, 0).isr, state(h, 0).leaderEpoch], [1, [1], fencedEpoch + 1]);
    assert.deepStrictEqual([state(h, 1).leader, state(h, 1).isr], [1, [1]]);
  });

  it('elects an out-of-sync replica only when the topic allows unclean election, alone in the ISR', () => {
    for (const unclean of [false, true]) {
      const h = cluster(2, [[1, 2]], { 'unclean.leader.election.enable': String(unclean) });
      assert.equal(alter(h, 1, { isr: [1] }).topics[0]!.partitions[0]!.errorCode, ErrorCode.NONE);
      beat(h, 1, { wantFence: true });
      assert.deepStrictEqual([state(h).leader, state(h).isr], unclean ? [2, [2]] : [-1, [1]]);
    }
  });

  it('moves leaderships away in the batch that marks a broker in controlled shutdown, and on re-registration and unregistration', () => {
    const h = cluster(3, [[1, 2, 3]]);
    const r = beat(h, 1, { wantShutDown: true });
    assert.deepStrictEqual([r.isFenced, r.shouldShutDown], [false, false]);
    const batch = h.log[h.log.length - 1]!.records;
    assert.deepStrictEqual(batch.map((rec) => rec.type), ['partitionChange', 'brokerRegistrationChange']);
    assert.deepStrictEqual([state(h).leader, state(h).isr], [2, [2, 3]]);
    restart(h, 2, 7);
    assert.deepStrictEqual([state(h).leader, state(h).isr], [3, [3]]);
    h.now((next) => h.c.unregisterBroker(3, next));
    assert.deepStrictEqual([state(h).leader, state(h).isr], [-1, [3]]);
  });

  it('elects over a topic\'s partitions found through the replica index, touching no other topic', () => {
    const h = cluster(3, [[1, 2], [2, 3], [3, 1]]);
    h.now((next) => h.c.createTopics([{ name: 'u', numPartitions: -1, replicationFactor: -1, assignment: [[2, 3]], configs: {} }], false, next));
    beat(h, 1, { wantFence: true });
    const changed = h.log[h.log.length - 1]!.records.filter((r) => r.type === 'partitionChange').map((r) => r.type === 'partitionChange' && r.partition);
    assert.deepStrictEqual(changed, [0, 2]);
    assert.deepStrictEqual(h.c.image.topicsByName.get('u')!.table.state(0).partitionEpoch, 0);
  });
});


describe('controlled shutdown', () => {
  /** A heartbeat reporting `applied` as the broker's last applied metadata offset. */
  function beatAt(h: Harness, id: number, applied: number, wantShutDown = false): Reply<'heartbeat'> {
    return h.now<Reply<'heartbeat'>>((next) => h.c.heartbeat({ brokerId: id, brokerEpoch: h.epochs.get(id)!, currentMetadataOffset: applied, wantFence: false, wantShutDown, warm: true }, next, 0));
  }

  it('keeps the broker unfenced and serving until every unfenced broker, itself included, has applied the move, then fences it and lets it stop', () => {
    const h = cluster(3, [[1, 2, 3], [2, 1, 3]]);
    const batches = h.log.length;
    const first = beatAt(h, 1, h.next - 1, true);
    const moved = h.next - 1;
    assert.deepStrictEqual([first.isFenced, first.shouldShutDown], [false, false]);
    assert.deepStrictEqual([h.c.image.brokers.get(1)!.fenced, h.c.image.brokers.get(1)!.inControlledShutdown], [false, true]);
    assert.deepStrictEqual([state(h, 0).leader, state(h, 0).isr, state(h, 1).isr], [2, [2, 3], [2, 3]]);
    // Asking again changes nothing while broker 2 and 3 have not reported the move.
    assert.equal(beatAt(h, 1, moved, true).shouldShutDown, false);
    beatAt(h, 2, moved);
    beatAt(h, 3, moved - 1);
    assert.equal(beatAt(h, 1, moved, true).shouldShutDown, false);
    assert.equal(h.log.length, batches + 1);
    beatAt(h, 3, moved);
    // Its own image must show the move too, or it would take produces for a partition it no longer leads.
    assert.equal(beatAt(h, 1, moved - 1, true).shouldShutDown, false);
    const last = beatAt(h, 1, moved, true);
    assert.deepStrictEqual([last.isFenced, last.shouldShutDown], [true, true]);
    assert.deepStrictEqual([h.c.image.brokers.get(1)!.fenced, h.log.length], [true, batches + 2]);
    // A fenced broker in controlled shutdown is let go at once, with no batch.
    assert.equal(beatAt(h, 1, moved, true).shouldShutDown, true);
    assert.equal(h.log.length, batches + 2);
  });

  it('lets a broker with no other unfenced broker stop in the batch that marks it', () => {
    const h = cluster(1, [[1]]);
    const r = beatAt(h, 1, h.next - 1, true);
    assert.deepStrictEqual([r.isFenced, r.shouldShutDown], [true, true]);
    assert.deepStrictEqual([state(h).leader, state(h).isr], [-1, [1]]);
    assert.deepStrictEqual(h.log[h.log.length - 1]!.records.map((rec) => rec.type), ['partitionChange', 'brokerRegistrationChange']);
    // A fenced broker does not hold back another's shutdown.
    const two = cluster(2, [[1, 2]]);
    beat(two, 2, { wantFence: true });
    assert.equal(beatAt(two, 1, two.next - 1, true).shouldShutDown, true);
  });

  it('after a controller failover waits for reports at or past the new controller\'s image', () => {
    const h = cluster(2, [[1, 2]]);
    const moved = h.next;
    assert.equal(beatAt(h, 1, moved - 1, true).shouldShutDown, false);
    h.c.deactivate();
    h.c.activate(2, 0);
    // The new controller neither knows the marking offset nor broker 2's report: it waits for one.
    assert.equal(beatAt(h, 1, moved, true).shouldShutDown, false);
    beatAt(h, 2, moved - 1);
    assert.equal(beatAt(h, 1, moved, true).shouldShutDown, false);
    beatAt(h, 2, moved);
    assert.equal(beatAt(h, 1, moved, true).shouldShutDown, true);
  });
});
describe('AlterPartition', () => {
  it('accepts a leader\'s ISR change with the partition epoch as compare-and-set token and answers the new state', () => {
    const h = cluster(3, [[1, 2, 3]]);
    const r = alter(h, 1, { isr: [1, 3] });
    assert.equal(r.errorCode, ErrorCode.NONE);
    assert.deepStrictEqual(r.topics[0]!.partitions[0], { partition: 0, errorCode: ErrorCode.NONE, leaderId: 1, leaderEpoch: 0, isr: [1, 3], partitionEpoch: 1 });
    assert.deepStrictEqual(state(h), { leader: 1, isr: [1, 3], leaderEpoch: 0, partitionEpoch: 1 });
    // The same request again quotes a stale partition epoch.
    assert.equal(alter(h, 1, { isr: [1, 3], partitionEpoch: 0 }).topics[0]!.partitions[0]!.errorCode, ErrorCode.INVALID_UPDATE_VERSION);
    // An unchanged ISR writes nothing and answers the state as is.
    const before = h.next;
    assert.equal(alter(h, 1, { isr: [1, 3] }).topics[0]!.partitions[0]!.partitionEpoch, 1);
    assert.equal(h.next, before);
    // With broker epochs (v3): a matching one is eligible.
    assert.equal(alter(h, 1, { isr: [], newIsr: [{ brokerId: 1, brokerEpoch: h.epochs.get(1)! }, { brokerId: 2, brokerEpoch: h.epochs.get(2)! }] }).topics[0]!.partitions[0]!.errorCode, ErrorCode.NONE);
  });

  it('refuses with the codes of KRaft\'s checks, in their order', () => {
    const h = cluster(4, [[1, 2, 3]]);
    beat(h, 4, { wantFence: true });
    const code = (r: Reply<'alterPartition'>): ErrorCode => r.topics[0]?.partitions[0]?.errorCode ?? r.errorCode;
    const s = state(h);
    assert.equal(h.c.alterPartition({ brokerId: 1, brokerEpoch: 999, topics: [] }, h.next).kind, 'answered');
    assert.equal(alter(h, 9, { isr: [1] }).errorCode, ErrorCode.STALE_BROKER_EPOCH);
    assert.equal(code(alter(h, 1, { isr: [1] }, { topicId: 'f'.repeat(32) })), ErrorCode.UNKNOWN_TOPIC_ID);
    assert.equal(code(alter(h, 1, { isr: [1] }, { topicId: null, topicName: 'nope' })), ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    assert.equal(code(alter(h, 1, { isr: [1, 2, 3] }, { topicId: null, topicName: 't' })), ErrorCode.NONE);
    assert.equal(code(alter(h, 1, { isr: [1], partition: 5 })), ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    assert.equal(code(alter(h, 1, { isr: [1], leaderEpoch: s.leaderEpoch + 1 })), ErrorCode.NOT_CONTROLLER);
    assert.equal(code(alter(h, 1, { isr: [1], partitionEpoch: 50 })), ErrorCode.NOT_CONTROLLER);
    beat(h, 1, { wantFence: true });
    beat(h, 1);
    // Broker 1 led at epoch 0; broker 2 leads at epoch 1 now.
    assert.deepStrictEqual([state(h).leader, state(h).leaderEpoch, state(h).isr], [2, 1, [2, 3]]);
    assert.equal(code(alter(h, 1, { isr: [1], leaderEpoch: 0 })), ErrorCode.FENCED_LEADER_EPOCH);
    assert.equal(code(alter(h, 3, { isr: [2, 3] })), ErrorCode.INVALID_REQUEST);
    assert.equal(code(alter(h, 2, { isr: [3] })), ErrorCode.INVALID_REQUEST, 'the leader must stay in the ISR');
    assert.equal(code(alter(h, 2, { isr: [2, 2] })), ErrorCode.INVALID_REQUEST, 'no duplicates');
    assert.equal(code(alter(h, 2, { isr: [2, 4] })), ErrorCode.INVALID_REQUEST, 'only replicas');
    assert.equal(code(alter(h, 2, { isr: [2], leaderRecoveryState: 1 })), ErrorCode.INVALID_REQUEST);
    assert.equal(code(alter(h, 2, { isr: [], newIsr: [{ brokerId: 2, brokerEpoch: -1 }, { brokerId: 3, brokerEpoch: 12345 }] })), ErrorCode.INELIGIBLE_REPLICA);
    beat(h, 3, { wantFence: true });
    assert.equal(code(alter(h, 2, { isr: [2, 3] })), ErrorCode.INELIGIBLE_REPLICA, 'a fenced broker joins no ISR');
    const inactive = new Harness(config());
    inactive.c.deactivate();
    const refused = inactive.c.alterPartition({ brokerId: 1, brokerEpoch: 0, topics: [] }, 0);
    assert.ok(refused.kind === 'answered' && refused.reply.kind === 'alterPartition' && refused.reply.errorCode === ErrorCode.NOT_CONTROLLER);
  });
});

describe('ElectLeaders and the imbalance check', () => {
  it('moves leadership back to the preferred replica, or says why not', () => {
    const h = cluster(3, [[1, 2, 3], [2, 3, 1]]);
    beat(h, 1, { wantFence: true });
    const named = [{ topic: 't', partitions: [0, 1, 7] }, { topic: 'nope', partitions: [0] }];
    assert.deepStrictEqual(elect(h, ElectionType.PREFERRED, named).map((r) => r.errorCode), [
      ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE, ErrorCode.ELECTION_NOT_NEEDED, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
    ]);
    beat(h, 1);
    // Back, but not in the ISR until the leader's AlterPartition adds it.
    assert.equal(elect(h, ElectionType.PREFERRED, named.slice(0, 1))[0]!.errorCode, ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE);
    assert.equal(alter(h, 2, { isr: [2, 3, 1] }).topics[0]!.partitions[0]!.errorCode, ErrorCode.NONE);
    const epoch = state(h).leaderEpoch;
    // Every partition: only the elected one is answered.
    assert.deepStrictEqual(elect(h, ElectionType.PREFERRED, null), [{ topic: 't', partition: 0, errorCode: ErrorCode.NONE, message: null }]);
    assert.deepStrictEqual([state(h).leader, state(h).leaderEpoch], [1, epoch + 1]);
    const bad = h.c.electLeaders(2, null, h.next);
    assert.ok(bad.kind === 'answered' && bad.reply.kind === 'electLeaders' && bad.reply.errorCode === ErrorCode.INVALID_REQUEST);
  });

  it('elects an out-of-sync replica on an unclean ElectLeaders only for a leaderless partition', () => {
    const h = cluster(2, [[1, 2]]);
    assert.equal(alter(h, 1, { isr: [1] }).topics[0]!.partitions[0]!.errorCode, ErrorCode.NONE);
    assert.equal(elect(h, ElectionType.UNCLEAN, [{ topic: 't', partitions: [0] }])[0]!.errorCode, ErrorCode.ELECTION_NOT_NEEDED);
    beat(h, 2, { wantFence: true });
    beat(h, 1, { wantFence: true });
    assert.equal(elect(h, ElectionType.UNCLEAN, [{ topic: 't', partitions: [0] }])[0]!.errorCode, ErrorCode.ELIGIBLE_LEADERS_NOT_AVAILABLE);
    beat(h, 2);
    assert.equal(state(h).leader, -1, 'unclean election is off for the topic');
    assert.equal(elect(h, ElectionType.UNCLEAN, [{ topic: 't', partitions: [0] }])[0]!.errorCode, ErrorCode.NONE);
    assert.deepStrictEqual([state(h).leader, state(h).isr], [2, [2]]);
  });

  it('moves leaders back once per interval when a broker\'s share of preferred partitions led elsewhere passes the percentage', () => {
    const interval = 1000;
    const h = cluster(2, Array.from({ length: 20 }, (_, p) => (p % 2 === 0 ? [1, 2] : [2, 1])), {}, new Harness(config({ leaderImbalanceCheckIntervalMs: interval, leaderImbalancePerBrokerPercentage: 10 })));
    beat(h, 1, { wantFence: true });
    beat(h, 1);
    for (let p = 0; p < 20; p += 2) alter(h, 2, { partition: p, isr: [2, 1] });
    // One of broker 1's ten back by hand: 9 of 10 (90 %) led elsewhere.
    elect(h, ElectionType.PREFERRED, [{ topic: 't', partitions: [0] }]);
    assert.equal(h.c.balanceLeaders(h.next, interval - 1), null, 'not before the interval');
    const out = h.c.balanceLeaders(h.next, interval);
    assert.ok(out !== null && out.kind === 'propose' && out.records.length === 9);
    h.next++;
    h.commitAll();
    for (let p = 0; p < 20; p++) assert.equal(state(h, p).leader, p % 2 === 0 ? 1 : 2);
    assert.equal(h.c.balanceLeaders(h.next, 3 * interval), null, 'balanced');

    // 1 of 10 led elsewhere is 10 %: not above the percentage.
    beat(h, 1, { wantFence: true });
    beat(h, 1);
    for (let p = 0; p < 20; p += 2) alter(h, 2, { partition: p, isr: [2, 1] });
    elect(h, ElectionType.PREFERRED, [{ topic: 't', partitions: [0, 2, 4, 6, 8, 10, 12, 14, 16] }]);
    assert.equal(h.c.balanceLeaders(h.next, 5 * interval), null);
  });
});

// ---- invariants over random event sequences ----

type Event =
  | { readonly kind: 'fence' | 'unfence' | 'shutdown' | 'restart'; readonly broker: number }
  | { readonly kind: 'alter'; readonly partition: number; readonly members: readonly boolean[]; readonly stale: boolean }
  | { readonly kind: 'elect'; readonly type: number; readonly partition: number };

const BROKERS = [1, 2, 3, 4];
const ASSIGNMENT = [[1, 2, 3], [2, 3, 4], [3, 4, 1], [4, 1, 2], [1, 3, 4], [2, 4, 1]];

const event: fc.Arbitrary<Event> = fc.oneof(
  fc.record({ kind: fc.constantFrom('fence' as const, 'unfence' as const, 'shutdown' as const, 'restart' as const), broker: fc.constantFrom(...BROKERS) }),
  fc.record({ kind: fc.constant('alter' as const), partition: fc.integer({ min: 0, max: ASSIGNMENT.length - 1 }), members: fc.array(fc.boolean(), { minLength: 3, maxLength: 3 }), stale: fc.boolean() }),
  fc.record({ kind: fc.constant('elect' as const), type: fc.constantFrom(ElectionType.PREFERRED, ElectionType.UNCLEAN), partition: fc.integer({ min: 0, max: ASSIGNMENT.length - 1 }) }),
);

function apply(h: Harness, e: Event, incarnation: number): void {
  const t = h.c.image.topicsByName.get('t')!;
  switch (e.kind) {
    case 'fence':
      beat(h, e.broker, { wantFence: true });
      return;
    case 'unfence':
      if (!h.c.image.brokers.get(e.broker)!.inControlledShutdown) beat(h, e.broker);
      return;
    case 'shutdown':
      beat(h, e.broker, { wantShutDown: true });
      return;
    case 'restart':
      restart(h, e.broker, incarnation);
      return;
    case 'alter': {
      // The leader (or, when leaderless, the first replica) proposes the chosen replicas plus itself.
      const s = t.table.state(e.partition);
      const sender = s.leader === -1 ? s.replicas[0]! : s.leader;
      const isr = [sender, ...s.replicas.filter((r, i) => r !== sender && e.members[i])];
      alter(h, sender, { partition: e.partition, isr, partitionEpoch: e.stale ? s.partitionEpoch - 1 : s.partitionEpoch });
      return;
    }
    case 'elect':
      elect(h, e.type, [{ topic: 't', partitions: [e.partition] }]);
      return;
  }
}

/** The invariants between the image before an event and after it; returns the first broken one. */
function broken(before: MetadataImage, after: MetadataImage, e: Event): string | null {
  const t0 = before.topicsByName.get('t')!;
  const t1 = after.topicsByName.get('t')!;
  const unclean = t1.configs['unclean.leader.election.enable'] === 'true' || (e.kind === 'elect' && e.type === ElectionType.UNCLEAN);
  for (let p = 0; p < t1.table.count; p++) {
    const a = t0.table.state(p);
    const b = t1.table.state(p);
    if (b.leader !== -1 && !b.isr.includes(b.leader)) return `p${p}: leader ${b.leader} outside ISR ${b.isr}`;
    if (b.isr.length === 0) return `p${p}: empty ISR`;
    if (b.isr.some((r) => !b.replicas.includes(r))) return `p${p}: ISR ${b.isr} outside replicas ${b.replicas}`;
    if (b.leaderEpoch < a.leaderEpoch || b.partitionEpoch < a.partitionEpoch) return `p${p}: an epoch went back`;
    const changed = a.leader !== b.leader || a.isr.join() !== b.isr.join();
    if (changed && b.partitionEpoch === a.partitionEpoch) return `p${p}: changed without a partition epoch bump`;
    if (a.leader !== b.leader && b.leaderEpoch === a.leaderEpoch) return `p${p}: new leader without a leader epoch bump`;
    const leader = after.brokers.get(b.leader);
    if (b.leader !== -1 && (leader === undefined || leader.fenced || leader.inControlledShutdown)) return `p${p}: ineligible broker ${b.leader} leads`;
    if (b.leader !== -1 && b.leader !== a.leader && !a.isr.includes(b.leader) && !unclean) return `p${p}: unclean election of ${b.leader}`;
  }
  return null;
}

describe('replication invariants', () => {
  for (const unclean of [false, true]) {
    it(`hold over random fence/unfence/shutdown/restart/AlterPartition/ElectLeaders sequences (unclean election ${unclean ? 'on' : 'off'})`, () => {
      fc.assert(fc.property(fc.array(event, { minLength: 1, maxLength: 40 }), (events) => {
        const h = cluster(4, ASSIGNMENT, { 'unclean.leader.election.enable': String(unclean) });
        for (const [i, e] of events.entries()) {
          const before = h.c.image;
          apply(h, e, i + 100);
          const why = broken(before, h.c.image, e);
          assert.equal(why, null, `after ${JSON.stringify(e)}`);
        }
      }), { numRuns: 300 });
    });
  }
});
