// Test driver for the GroupCoordinator: a clock, call refs, every reply captured (and counted, so
// a second reply to one call fails the test), appends held in a list the test settles by hand or
// settled at once, a durable log of what was acknowledged, and builders for calls.
import assert from 'node:assert/strict';
import { GroupRecordCodec } from '../../../src/coordinator/groups/group_records.js';
import type { ConsumerGroupValue } from '../../../src/coordinator/groups/consumer_group_value.js';
import { GroupCoordinator, type CoordinatorDeps } from '../../../src/coordinator/groups/group_coordinator.js';
import {
  DEFAULT_GROUP_CONFIG, type CommitCall, type ConsumerGroupPort, type GroupCall, type GroupConfig, type GroupEffect,
  type GroupRecord, type GroupReply, type HeartbeatCall, type JoinCall, type LeaveCall, type SyncCall,
} from '../../../src/coordinator/groups/group_api.js';

export const TEST_CONFIG: GroupConfig = {
  ...DEFAULT_GROUP_CONFIG,
  minSessionTimeoutMs: 1000,
  maxSessionTimeoutMs: 300_000,
  initialRebalanceDelayMs: 0,
  maxGroupSize: 10,
  maxGroups: 100,
};

const utf8 = new TextEncoder();
const fromUtf8 = new TextDecoder();

/** Test protocol metadata: the subscribed topics, comma-separated. */
/** A KIP-848 group's value after a trip through its bytes in the log: encoded, decoded, gathered. */
export function viaLog(groupId: string, value: ConsumerGroupValue | null): ConsumerGroupValue | null {
  const codec = new GroupRecordCodec();
  for (const r of codec.encode({ kind: 'consumerGroup', groupId, value })) assert.equal(codec.decode(r.key, r.value), null);
  const loaded = codec.finishLoad();
  assert.ok(loaded.length <= 1);
  const got = loaded[0];
  return got?.kind === 'consumerGroup' ? got.value : null;
}

export function meta(text: string): Uint8Array {
  return utf8.encode(text);
}

export function text(bytes: Uint8Array): string {
  return fromUtf8.decode(bytes);
}

export function testDeps(config: Partial<GroupConfig> = {}, createConsumerGroup?: (groupId: string) => ConsumerGroupPort): CoordinatorDeps {
  let n = 0;
  return {
    config: { ...TEST_CONFIG, ...config },
    newMemberId: (clientId) => `${clientId}-${++n}`,
    subscribedTopics: (type, md) => (type === 'consumer' ? text(md).split(',').filter((t) => t !== '') : null),
    createConsumerGroup: createConsumerGroup ?? (() => { throw new Error('no KIP-848 groups in this test'); }),
  };
}

type ReplyOf<K extends GroupReply['kind']> = Extract<GroupReply, { kind: K }>;
export type Rebalanced = Extract<GroupEffect, { kind: 'rebalanced' }>;

export class Harness {
  now = 1_000_000;
  coord: GroupCoordinator;
  readonly replies = new Map<number, GroupReply[]>();
  readonly pending: { token: number; records: GroupRecord[] }[] = [];
  readonly durable: GroupRecord[] = [];
  readonly rebalances: Rebalanced[] = [];
  /** Settle every append as soon as it is emitted. */
  autoAck = true;
  private nextRef = 1;

  constructor(readonly deps: CoordinatorDeps = testDeps()) {
    this.coord = new GroupCoordinator(deps);
  }

  send(call: GroupCall): number {
    const ref = this.nextRef++;
    this.absorb(this.coord.handle(ref, call, this.now));
    return ref;
  }

  /** Sends a call that must be answered at once, and returns that answer. */
  ask<K extends GroupReply['kind']>(call: GroupCall & { kind: K }): ReplyOf<K> {
    return this.reply(this.send(call), call.kind);
  }

  absorb(effects: GroupEffect[]): void {
    for (const e of effects) {
      if (e.kind === 'reply') {
        const list = this.replies.get(e.ref) ?? [];
        list.push(e.reply);
        this.replies.set(e.ref, list);
        assert.equal(list.length, 1, `call ${e.ref} answered twice`);
      } else if (e.kind === 'rebalanced') {
        this.rebalances.push(e);
      } else if (this.autoAck) {
        this.durable.push(...e.records);
        this.absorb(this.coord.appended(e.token, true, this.now));
      } else {
        this.pending.push({ token: e.token, records: e.records });
      }
    }
  }

  /** Settles the index-th held append. */
  settle(ok: boolean, index = 0): void {
    const [p] = this.pending.splice(index, 1);
    assert.ok(p !== undefined, 'no held append');
    if (ok) this.durable.push(...p.records);
    this.absorb(this.coord.appended(p.token, ok, this.now));
  }

  settleAll(ok = true): void {
    while (this.pending.length > 0) this.settle(ok);
  }

  advance(ms: number): void {
    this.now += ms;
    this.runTimers();
  }

  runTimers(): void {
    for (let i = 0; i < 100; i++) {
      const d = this.coord.nextDeadline();
      if (d === null || d > this.now) return;
      this.absorb(this.coord.tick(this.now));
    }
    assert.fail('tick keeps finding work at the same instant');
  }

  answered(ref: number): boolean {
    return this.replies.has(ref);
  }

  reply<K extends GroupReply['kind']>(ref: number, kind: K): ReplyOf<K> {
    const list = this.replies.get(ref);
    assert.ok(list !== undefined && list.length === 1, `call ${ref} has ${list?.length ?? 0} answers`);
    const r = list[0]!;
    assert.equal(r.kind, kind);
    return r as ReplyOf<K>;
  }

  /** A new coordinator that loads what was acknowledged; held appends and parked calls are lost. */
  restart(): void {
    this.pending.length = 0;
    this.coord = new GroupCoordinator(this.deps);
    this.coord.load(this.durable, this.now);
  }
}

export function joinCall(o: Partial<JoinCall> = {}): JoinCall {
  return {
    kind: 'join', groupId: 'g', memberId: '', groupInstanceId: null, sessionTimeoutMs: 10_000, rebalanceTimeoutMs: 20_000,
    protocolType: 'consumer', protocols: [{ name: 'range', metadata: meta('t') }], clientId: 'c', clientHost: '/127.0.0.1',
    requireKnownMemberId: false, reason: null, ...o,
  };
}

export function syncCall(memberId: string, generationId: number, o: Partial<SyncCall> = {}): SyncCall {
  return {
    kind: 'sync', groupId: 'g', generationId, memberId, groupInstanceId: null, protocolType: null, protocolName: null,
    assignments: [], ...o,
  };
}

export function heartbeatCall(memberId: string, generationId: number, o: Partial<HeartbeatCall> = {}): HeartbeatCall {
  return { kind: 'heartbeat', groupId: 'g', generationId, memberId, groupInstanceId: null, ...o };
}

export function leaveCall(members: { memberId: string; groupInstanceId?: string | null }[], groupId = 'g'): LeaveCall {
  return { kind: 'leave', groupId, members: members.map((m) => ({ memberId: m.memberId, groupInstanceId: m.groupInstanceId ?? null, reason: null })) };
}

export function commitCall(
  memberId: string, generationId: number, offsets: Record<string, number>, o: Partial<CommitCall> = {},
): CommitCall {
  const byTopic = new Map<string, CommitCall['topics'][number]['partitions']>();
  for (const [key, offset] of Object.entries(offsets)) {
    const [topic, partition] = key.split(':') as [string, string];
    const list = byTopic.get(topic) ?? [];
    list.push({ partition: Number(partition), offset, leaderEpoch: 3, metadata: `m${offset}`, commitTimestamp: -1 });
    byTopic.set(topic, list);
  }
  return {
    kind: 'commit', groupId: 'g', generationId, memberId, groupInstanceId: null, retentionTimeMs: -1,
    topics: [...byTopic].map(([name, partitions]) => ({ name, partitions })), ...o,
  };
}

/** What OffsetFetch says for `topic:partition` keys: offset, or -1 when none. */
export function fetched(h: Harness, keys: string[], groupId = 'g'): Record<string, number> {
  const topics = new Map<string, number[]>();
  for (const key of keys) {
    const [topic, partition] = key.split(':') as [string, string];
    topics.set(topic, [...(topics.get(topic) ?? []), Number(partition)]);
  }
  const r = h.ask({
    kind: 'offsetFetch', groupId, topics: [...topics].map(([name, partitions]) => ({ name, partitions })),
    requireStable: false, memberId: null, memberEpoch: -1,
  });
  const out: Record<string, number> = {};
  for (const t of r.topics) for (const p of t.partitions) out[`${t.name}:${p.partition}`] = p.offset;
  return out;
}

/** Joins a fresh member through its MEMBER_ID_REQUIRED round; returns the second join's ref and the id. */
export function joinNew(h: Harness, o: Partial<JoinCall> = {}): { ref: number; memberId: string } {
  const first = h.ask(joinCall({ requireKnownMemberId: true, ...o }));
  assert.equal(first.errorCode, 79);
  return { ref: h.send(joinCall({ requireKnownMemberId: true, ...o, memberId: first.memberId })), memberId: first.memberId };
}

/** Describes group `g` (or another). */
export function describe(h: Harness, groupId = 'g') {
  return h.ask({ kind: 'describe', groupIds: [groupId] }).groups[0]!;
}
