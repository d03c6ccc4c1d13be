// Partition reassignment on the controller (KIP-455): a target grows the replica list to the target
// followed by the replicas leaving, completes once the ISR holds the whole target (at once when it
// already does, else on the AlterPartition that brings the last one in), moving leadership off a
// leaving leader; a cancel restores the original replicas; a new target replaces an ongoing one;
// bad targets get Kafka's codes; the listing shows what is moving. Over random sequences of
// targets, cancels, ISR changes and broker fencing the image keeps the reassignment invariants.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { ControllerReply } from '../../../../src/cluster/metadata/controller.js';
import type { PartitionState } from '../../../../src/cluster/metadata/partitions.js';
import { MAX_REASSIGNMENT_PARTITIONS, type ReassignmentResult } from '../../../../src/cluster/metadata/replication_control.js';
import { ErrorCode } from '../../../../src/protocol/errors.js';
import { Harness } from '../../../helpers/controller_harness.js';

type Reply<K extends ControllerReply['kind']> = Extract<ControllerReply, { kind: K }>;

function cluster(n: number, assignment: number[][], configs: Record<string, string> = {}): Harness {
  const h = new Harness();
  h.brokers(Array.from({ length: n }, (_, i) => i + 1));
  const r = h.now<Reply<'topics'>>((next) => h.c.createTopics([{ name: 't', numPartitions: -1, replicationFactor: -1, assignment, configs }], false, next));
  assert.equal(r.results[0]!.errorCode, ErrorCode.NONE);
  return h;
}

function state(h: Harness, p = 0): PartitionState {
  return h.c.image.topicsByName.get('t')!.table.state(p);
}

function reassign(h: Harness, partitions: { partition: number; replicas: number[] | null }[], topic = 't'): ReassignmentResult[] {
  const r = h.now<Reply<'alterPartitionReassignments'>>((next) => h.c.alterPartitionReassignments([{ topic, partitions }], next));
  assert.equal(r.errorCode, ErrorCode.NONE);
  return [...r.results];
}

function codeOf(h: Harness, partition: number, replicas: number[] | null, topic = 't'): number {
  return reassign(h, [{ partition, replicas }], topic)[0]!.errorCode;
}

/** The partition leader's AlterPartition to `isr`; answers the partition's result. */
function alter(h: Harness, isr: number[], p = 0): Reply<'alterPartition'>['topics'][number]['partitions'][number] {
  const s = state(h, p);
  const r = h.now<Reply<'alterPartition'>>((next) => h.c.alterPartition({
    brokerId: s.leader, brokerEpoch: h.epochs.get(s.leader)!,
    topics: [{ topicId: h.c.image.topicsByName.get('t')!.id, topicName: null, partitions: [{
      partition: p, leaderEpoch: s.leaderEpoch, partitionEpoch: s.partitionEpoch, newIsr: isr.map((brokerId) => ({ brokerId, brokerEpoch: -1 })), leaderRecoveryState: 0,
    }] }],
  }, next));
  return r.topics[0]!.partitions[0]!;
}

function fence(h: Harness, id: number, wantFence = true): void {
  h.now((next) => h.c.heartbeat({ brokerId: id, brokerEpoch: h.epochs.get(id)!, currentMetadataOffset: h.next, wantFence, wantShutDown: false, warm: true }, next, 0));
}

function listed(h: Harness, topics: { topic: string; partitions: number[] }[] | null = null): Reply<'listPartitionReassignments'>['reassignments'] {
  const out = h.c.listPartitionReassignments(topics);
  assert.equal(out.kind, 'answered');
  const reply = (out as { reply: ControllerReply }).reply as Reply<'listPartitionReassignments'>;
  assert.equal(reply.errorCode, ErrorCode.NONE);
  return reply.reassignments;
}

describe('reassignment on the controller', () => {
  it('adds the target\'s new replicas first, completes when they are in sync and moves leadership off a leaving leader', () => {
    const h = cluster(4, [[1, 2, 3], [2, 3, 1]]);
    assert.deepStrictEqual(reassign(h, [{ partition: 0, replicas: [2, 3, 4] }]), [{ topic: 't', partition: 0, errorCode: ErrorCode.NONE, message: null }]);
    let s = state(h);
    assert.deepStrictEqual([s.replicas, s.addingReplicas, s.removingReplicas, s.isr, s.leader, s.leaderEpoch], [[2, 3, 4, 1], [4], [1], [1, 2, 3], 1, 0]);
    assert.deepStrictEqual(listed(h), [{ topic: 't', partition: 0, replicas: [2, 3, 4, 1], addingReplicas: [4], removingReplicas: [1] }]);
    assert.deepStrictEqual(listed(h, [{ topic: 't', partitions: [1] }, { topic: 'nope', partitions: [0] }]), []);

    // The leader brings 4 into the ISR: the target is in sync, the reassignment completes in that change.
    const answer = alter(h, [1, 2, 3, 4]);
    assert.equal(answer.errorCode, ErrorCode.NONE);
    s = state(h);
    assert.deepStrictEqual([s.replicas, s.addingReplicas, s.removingReplicas, s.isr, s.leader, s.leaderEpoch], [[2, 3, 4], [], [], [2, 3, 4], 2, 1]);
    assert.deepStrictEqual([answer.leaderId, answer.leaderEpoch, answer.isr, answer.partitionEpoch], [2, 1, [2, 3, 4], s.partitionEpoch]);
    assert.deepStrictEqual(listed(h), []);
  });

  it('completes at once a target already in sync (shrink), and takes a mere reordering without a reassignment', () => {
    const h = cluster(3, [[1, 2, 3], [1, 2, 3]]);
    reassign(h, [{ partition: 0, replicas: [2, 3] }, { partition: 1, replicas: [3, 2, 1] }]);
    let s = state(h, 0);
    assert.deepStrictEqual([s.replicas, s.isr, s.leader, s.addingReplicas, s.removingReplicas], [[2, 3], [2, 3], 2, [], []]);
    s = state(h, 1);
    assert.deepStrictEqual([s.replicas, s.isr, s.leader, s.leaderEpoch], [[3, 2, 1], [1, 2, 3], 1, 0]);
    // The same target again changes nothing.
    const before = h.next;
    reassign(h, [{ partition: 1, replicas: [3, 2, 1] }]);
    assert.equal(h.next, before);
  });

  it('keeps a shrink whose target is partly out of sync going until the ISR holds it', () => {
    const h = cluster(3, [[1, 2, 3]]);
    alter(h, [1, 2]);
    reassign(h, [{ partition: 0, replicas: [1, 3] }]);
    assert.deepStrictEqual([state(h).replicas, state(h).removingReplicas], [[1, 3, 2], [2]]);
    alter(h, [1, 2, 3]);
    assert.deepStrictEqual([state(h).replicas, state(h).isr, state(h).removingReplicas], [[1, 3], [1, 3], []]);
  });

  it('cancels back to the original replicas, dropping the adding ones from the ISR and from leadership', () => {
    const h = cluster(4, [[1, 2]]);
    assert.equal(codeOf(h, 0, null), ErrorCode.NO_REASSIGNMENT_IN_PROGRESS);
    reassign(h, [{ partition: 0, replicas: [3, 4] }]);
    alter(h, [1, 2, 3]);
    // 3 is in sync, 4 is not: still moving. The leader is fenced, 2 leads, then 2 too: 3 (an adding replica) leads.
    fence(h, 1);
    fence(h, 2);
    let s = state(h);
    assert.deepStrictEqual([s.leader, s.isr, s.addingReplicas], [3, [3], [3, 4]]);
    // Only adding replicas are in sync: going back would need an unclean election, which the topic does not allow.
    assert.equal(codeOf(h, 0, null), ErrorCode.INVALID_REPLICA_ASSIGNMENT);
    fence(h, 2, false);
    alter(h, [3, 2]);
    assert.equal(codeOf(h, 0, null), ErrorCode.NONE);
    s = state(h);
    assert.deepStrictEqual([s.replicas, s.isr, s.leader, s.addingReplicas, s.removingReplicas], [[1, 2], [2], 2, [], []]);
  });

  it('replaces an ongoing reassignment by a new target taken from the original replicas', () => {
    const h = cluster(5, [[1, 2, 3]]);
    reassign(h, [{ partition: 0, replicas: [1, 2, 4] }]);
    alter(h, [1, 2, 4]);
    assert.deepStrictEqual(state(h).replicas, [1, 2, 4], 'completed');
    reassign(h, [{ partition: 0, replicas: [1, 5, 3] }]);
    alter(h, [1, 2, 4, 5]);
    // 5 in sync, 3 is not. A new target [1, 2, 3] starts again from [1, 2, 4]: 5 (adding) leaves, ISR too.
    reassign(h, [{ partition: 0, replicas: [1, 2, 3] }]);
    const s = state(h);
    assert.deepStrictEqual([s.replicas, s.isr, s.addingReplicas, s.removingReplicas], [[1, 2, 3, 4], [1, 2, 4], [3], [4]]);
  });

  it('refuses bad targets with Kafka\'s codes and elects no adding replica that is not in sync', () => {
    const h = cluster(4, [[1, 2, 3]], { 'unclean.leader.election.enable': 'true' });
    assert.equal(codeOf(h, 0, []), ErrorCode.INVALID_REPLICA_ASSIGNMENT);
    assert.equal(codeOf(h, 0, [1, 1, 2]), ErrorCode.INVALID_REPLICA_ASSIGNMENT);
    assert.equal(codeOf(h, 0, [1, 2, 9]), ErrorCode.INVALID_REPLICA_ASSIGNMENT);
    assert.equal(codeOf(h, 5, [1, 2, 3]), ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    assert.equal(codeOf(h, 0, [1, 2, 3], 'nope'), ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    const twice = reassign(h, [{ partition: 0, replicas: [1, 2, 4] }, { partition: 0, replicas: [1, 2, 3] }]);
    assert.deepStrictEqual(twice.map((r) => r.errorCode), [ErrorCode.NONE, ErrorCode.INVALID_REQUEST]);
    const many = h.c.alterPartitionReassignments([{ topic: 't', partitions: Array.from({ length: MAX_REASSIGNMENT_PARTITIONS + 1 }, () => ({ partition: 0, replicas: null })) }], h.next);
    assert.equal(many.kind === 'answered' && many.reply.kind === 'alterPartitionReassignments' ? many.reply.errorCode : -1, ErrorCode.INVALID_REQUEST);
    // Target [4, 1, 2]: 4 is adding and out of sync. Every in-sync replica fenced: the unclean election skips 4.
    reassign(h, [{ partition: 0, replicas: [4, 1, 2] }]);
    fence(h, 1);
    fence(h, 2);
    fence(h, 3);
    assert.notEqual(state(h).leader, 4);
  });
});

// ---- invariants over random sequences ----

const BROKERS = [1, 2, 3, 4, 5];
const ASSIGNMENT = [[1, 2, 3], [2, 3, 4], [3, 4, 5]];

type Event =
  | { readonly kind: 'reassign'; readonly partition: number; readonly target: readonly number[] }
  | { readonly kind: 'cancel'; readonly partition: number }
  | { readonly kind: 'alter'; readonly partition: number; readonly members: readonly boolean[] }
  | { readonly kind: 'fence' | 'unfence'; readonly broker: number };

const partitionIndex = fc.integer({ min: 0, max: ASSIGNMENT.length - 1 });
const event: fc.Arbitrary<Event> = fc.oneof(
  fc.record({ kind: fc.constant('reassign' as const), partition: partitionIndex, target: fc.shuffledSubarray(BROKERS, { minLength: 1, maxLength: 4 }) }),
  fc.record({ kind: fc.constant('cancel' as const), partition: partitionIndex }),
  { arbitrary: fc.record({ kind: fc.constant('alter' as const), partition: partitionIndex, members: fc.array(fc.boolean(), { minLength: 8, maxLength: 8 }) }), weight: 3 },
  fc.record({ kind: fc.constantFrom('fence' as const, 'unfence' as const), broker: fc.constantFrom(...BROKERS) }),
);

/** Per partition, the replica list before its ongoing reassignment and that reassignment's target. */
interface Move {
  readonly original: readonly number[];
  readonly target: readonly number[];
}

function apply(h: Harness, e: Event): ReassignmentResult | null {
  switch (e.kind) {
    case 'reassign':
      return reassign(h, [{ partition: e.partition, replicas: [...e.target] }])[0]!;
    case 'cancel':
      return reassign(h, [{ partition: e.partition, replicas: null }])[0]!;
    case 'alter': {
      // The leader keeps itself and the chosen replicas (adding ones included).
      const s = state(h, e.partition);
      if (s.leader === -1) return null;
      alter(h, [s.leader, ...s.replicas.filter((r, i) => r !== s.leader && e.members[i])], e.partition);
      return null;
    }
    case 'fence':
    case 'unfence':
      fence(h, e.broker, e.kind === 'fence');
      return null;
  }
}

const sorted = (ids: readonly number[]): number[] => [...ids].sort((a, b) => a - b);
const moving = (s: PartitionState): boolean => s.addingReplicas.length > 0 || s.removingReplicas.length > 0;

/**
 * The invariants of one partition after event `e` (`own`: its answer for this partition), given
 * the move it was in before (`before`) and the one it is in now by what was asked (`move`); the
 * first broken one.
 */
function broken(s: PartitionState, e: Event, own: ReassignmentResult | null, before: Move | undefined, move: Move | undefined): string | null {
  if (s.leader !== -1 && (!s.replicas.includes(s.leader) || !s.isr.includes(s.leader))) return `leader ${s.leader} outside replicas ${s.replicas} or ISR ${s.isr}`;
  if (s.isr.length === 0 || s.isr.some((r) => !s.replicas.includes(r))) return `ISR ${s.isr} empty or outside replicas ${s.replicas}`;
  if (new Set(s.replicas).size !== s.replicas.length) return `replicas ${s.replicas} repeat a broker`;
  if ([...s.addingReplicas, ...s.removingReplicas].some((r) => !s.replicas.includes(r))) return 'adding or removing outside replicas';
  if (s.addingReplicas.some((r) => s.removingReplicas.includes(r))) return 'adding and removing overlap';
  const ok = own?.errorCode === ErrorCode.NONE;
  if (moving(s)) {
    if (move === undefined) return 'a reassignment nobody started';
    if (s.addingReplicas.some((r) => move.original.includes(r))) return `adding ${s.addingReplicas} overlaps the original ${move.original}`;
    if (s.replicas.filter((r) => !s.removingReplicas.includes(r)).join() !== move.target.join()) return `replicas ${s.replicas} minus removing are not the target ${move.target}`;
    if (sorted(s.replicas.filter((r) => !s.addingReplicas.includes(r))).join() !== sorted(move.original).join()) return `replicas ${s.replicas} minus adding are not the original ${move.original}`;
  } else if (ok && e.kind === 'cancel') {
    if (sorted(s.replicas).join() !== sorted(before!.original).join()) return `cancel left ${s.replicas}, not the original ${before!.original}`;
  } else if (move !== undefined) {
    // Not moving, not cancelled: the reassignment completed (now, or at once when asked).
    if (s.replicas.join() !== move.target.join()) return `completion left ${s.replicas}, not the target ${move.target}`;
    // A target that only reorders the original replicas is no reassignment and waits for nobody.
    const reorder = sorted(move.target).join() === sorted(move.original).join();
    if (!reorder && move.target.some((r) => !s.isr.includes(r))) return `completed with target ${move.target} not all in the ISR ${s.isr}`;
  }
  return null;
}

describe('reassignment invariants', () => {
  for (const unclean of [false, true]) {
    it(`hold over random target/cancel/AlterPartition/fence sequences (unclean election ${unclean ? 'on' : 'off'})`, () => {
      fc.assert(fc.property(fc.array(event, { minLength: 1, maxLength: 40 }), (events) => {
        const h = cluster(BROKERS.length, ASSIGNMENT, { 'unclean.leader.election.enable': String(unclean) });
        const moves = new Map<number, Move>();
        for (const e of events) {
          const lists = ASSIGNMENT.map((_, p) => state(h, p).replicas);
          const result = apply(h, e);
          for (let p = 0; p < ASSIGNMENT.length; p++) {
            const s = state(h, p);
            const before = moves.get(p);
            const own = result !== null && 'partition' in e && e.partition === p ? result : null;
            const move = own?.errorCode === ErrorCode.NONE && e.kind === 'reassign' ? { original: before?.original ?? lists[p]!, target: e.target } : before;
            assert.equal(broken(s, e, own, before, move), null, `p${p} after ${JSON.stringify(e)} (${JSON.stringify(own)})`);
            if (moving(s)) moves.set(p, move!);
            else moves.delete(p);
          }
        }
      }), { numRuns: 300 });
    });
  }
});
