// Properties of the coordinator under random sequences of client calls, timer ticks and append
// outcomes (settled in any order, some failing): every call is answered at most once and, once
// activity stops, exactly once; no two members hold the same partition in one generation;
// generations only grow; committed offsets change only through acknowledged commits and equal
// the last acknowledged one. The consumer protocol is opaque here: a test-side leader assigns
// partitions in its own encoding, `owner|p,p,...`.
import assert from 'node:assert/strict';
import { describe as suite, it } from 'node:test';
import fc from 'fast-check';
import { ErrorCode } from '../../../src/protocol/errors.js';
import type { GroupReply, JoinReply } from '../../../src/coordinator/groups/group_api.js';
import { Harness, commitCall, heartbeatCall, joinCall, leaveCall, meta, syncCall, testDeps, text } from './group_fixture.js';

const PARTITIONS = 6;
const SLOTS = 4;

type Cmd =
  | { t: 'act'; slot: number }
  | { t: 'join'; slot: number }
  | { t: 'leave'; slot: number }
  | { t: 'commit'; slot: number; partition: number; standalone: boolean }
  | { t: 'restart'; slot: number }
  | { t: 'advance'; ms: number }
  | { t: 'settle'; index: number; ok: boolean };

const slot = fc.integer({ min: 0, max: SLOTS - 1 });
const cmd: fc.Arbitrary<Cmd> = fc.oneof(
  { weight: 24, arbitrary: fc.record({ t: fc.constant('act' as const), slot }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('join' as const), slot }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('leave' as const), slot }) },
  { weight: 3, arbitrary: fc.record({ t: fc.constant('commit' as const), slot, partition: fc.integer({ min: 0, max: PARTITIONS - 1 }), standalone: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('restart' as const), slot }) },
  { weight: 3, arbitrary: fc.record({ t: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 3000 }) }) },
  { weight: 6, arbitrary: fc.record({ t: fc.constant('settle' as const), index: fc.nat(), ok: fc.integer({ min: 0, max: 4 }).map((x) => x > 0) }) },
);

/** A client that follows the protocol: join, sync, heartbeat; any error sends it back to joining. */
interface Client {
  readonly instanceId: string | null;
  /** Bumped by a restart: answers to an older incarnation's calls are ignored. */
  incarnation: number;
  phase: 'idle' | 'joining' | 'joined' | 'syncing' | 'stable';
  memberId: string;
  join: JoinReply | null;
}

/** What each ref was, to interpret its reply. */
type Sent =
  | { kind: 'join' | 'heartbeat' | 'leave'; client: Client; incarnation: number }
  | { kind: 'sync'; client: Client; incarnation: number; generationId: number; memberId: string }
  | { kind: 'commit'; partition: number; offset: number };

function tagOf(memberId: string, instanceId: string | null): string {
  return instanceId ?? memberId;
}

/** The test-side leader: partition p to the p-th member (mod n) in id order, encoded `owner|p,p`. */
function assign(members: JoinReply['members']): { memberId: string; assignment: Uint8Array }[] {
  const sorted = [...members].sort((a, b) => (a.memberId < b.memberId ? -1 : 1));
  return sorted.map((m, i) => {
    const parts: number[] = [];
    for (let p = i; p < PARTITIONS; p += sorted.length) parts.push(p);
    return { memberId: m.memberId, assignment: meta(`${tagOf(m.memberId, m.groupInstanceId)}|${parts.join(',')}`) };
  });
}

class Model {
  readonly h = new Harness(testDeps({ maxGroupSize: 3 }));
  readonly clients: Client[];
  readonly sent = new Map<number, Sent>();
  /** generation -> partition -> owner tag, from successful SyncGroup answers. */
  readonly owners = new Map<number, Map<number, string>>();
  readonly acked = new Map<number, number>();
  private readonly interpreted = new Set<number>();
  private maxGeneration = 0;
  private maxJoinedGeneration = 0;
  private nextOffset = 1;

  constructor(statics: boolean[]) {
    this.h.autoAck = false;
    this.clients = statics.map((s, i) => ({ instanceId: s ? `i${i}` : null, incarnation: 0, phase: 'idle', memberId: '', join: null }));
  }

  run(c: Cmd): void {
    const h = this.h;
    switch (c.t) {
      case 'act': return this.act(this.clients[c.slot]!);
      case 'join': return this.sendJoin(this.clients[c.slot]!);
      case 'leave': return this.leave(this.clients[c.slot]!);
      case 'commit': return this.commit(this.clients[c.slot]!, c.partition, c.standalone);
      case 'restart': return this.reset(this.clients[c.slot]!, true);
      case 'advance':
        h.now += c.ms;
        h.runTimers();
        return this.observe();
      case 'settle':
        if (h.pending.length > 0) h.settle(c.ok, c.index % h.pending.length);
        return this.observe();
    }
  }

  private act(client: Client): void {
    const j = client.join;
    if (client.phase === 'idle') return this.sendJoin(client);
    if (client.phase === 'joined' && j !== null) {
      client.phase = 'syncing';
      const assignments = j.leader === j.memberId && !j.skipAssignment ? assign(j.members) : [];
      return this.send({ kind: 'sync', client, incarnation: client.incarnation, generationId: j.generationId, memberId: j.memberId },
        syncCall(j.memberId, j.generationId, { groupInstanceId: client.instanceId, assignments }));
    }
    if (client.phase === 'stable' && j !== null) {
      this.send({ kind: 'heartbeat', client, incarnation: client.incarnation },
        heartbeatCall(j.memberId, j.generationId, { groupInstanceId: client.instanceId }));
    }
  }

  private sendJoin(client: Client): void {
    client.phase = 'joining';
    this.send({ kind: 'join', client, incarnation: client.incarnation }, joinCall({
      memberId: client.memberId, groupInstanceId: client.instanceId, requireKnownMemberId: true,
      clientId: 'c', sessionTimeoutMs: 6000, rebalanceTimeoutMs: 8000,
    }));
  }

  private leave(client: Client): void {
    this.send({ kind: 'leave', client, incarnation: client.incarnation }, leaveCall([{ memberId: client.memberId, groupInstanceId: client.instanceId }]));
    this.reset(client, true);
  }

  private reset(client: Client, newIncarnation: boolean): void {
    if (newIncarnation) client.incarnation++;
    client.phase = 'idle';
    client.memberId = '';
    client.join = null;
  }

  private commit(client: Client, partition: number, standalone: boolean): void {
    const offset = this.nextOffset++;
    const call = standalone || client.join === null
      ? commitCall('', -1, { [`t:${partition}`]: offset })
      : commitCall(client.join.memberId, client.join.generationId, { [`t:${partition}`]: offset }, { groupInstanceId: client.instanceId });
    this.send({ kind: 'commit', partition, offset }, call);
  }

  private send(what: Sent, call: Parameters<Harness['send']>[0]): void {
    this.sent.set(this.h.send(call), what);
    this.observe();
  }

  /** Interprets the replies that arrived since the last look, in arrival order, and checks the invariants. */
  observe(): void {
    for (const [ref, list] of this.h.replies) {
      if (this.interpreted.has(ref)) continue;
      this.interpreted.add(ref);
      this.interpret(this.sent.get(ref)!, list[0]!);
    }
    for (const r of this.h.rebalances.splice(0)) {
      assert.ok(r.generationId > this.maxGeneration, 'each completed rebalance starts a higher generation');
      this.maxGeneration = r.generationId;
    }
    const committed = new Map((this.h.coord.committedOffsets().get('g')?.offsets ?? []).map((o) => [o.partition, o.offset]));
    assert.deepEqual(committed, this.acked, 'committed offsets are the acknowledged ones');
  }

  private interpret(what: Sent, reply: GroupReply): void {
    if (what.kind === 'commit') {
      if (reply.kind === 'commit' && reply.topics[0]!.partitions[0]!.errorCode === ErrorCode.NONE) {
        this.acked.set(what.partition, what.offset);
      }
      return;
    }
    if (reply.kind === 'sync' && what.kind === 'sync' && reply.errorCode === ErrorCode.NONE) this.own(what, reply.assignment);
    if (reply.kind === 'join' && reply.errorCode === ErrorCode.NONE) {
      assert.ok(reply.generationId >= this.maxJoinedGeneration, 'members never join an older generation');
      this.maxJoinedGeneration = reply.generationId;
    }
    const client = what.client;
    if (what.incarnation !== client.incarnation || what.kind === 'leave') return;
    const errorCode = 'errorCode' in reply ? reply.errorCode : ErrorCode.NONE;
    if (errorCode === ErrorCode.NONE) {
      if (reply.kind === 'join') {
        client.phase = 'joined';
        client.memberId = reply.memberId;
        client.join = reply;
      } else if (reply.kind === 'sync') {
        client.phase = 'stable';
      }
    } else if (reply.kind === 'join' && errorCode === ErrorCode.MEMBER_ID_REQUIRED) {
      client.phase = 'idle';
      client.memberId = reply.memberId;
    } else {
      const forget = errorCode === ErrorCode.UNKNOWN_MEMBER_ID || errorCode === ErrorCode.FENCED_INSTANCE_ID;
      if (forget) this.reset(client, false);
      else client.phase = 'idle';
    }
  }

  private own(what: Sent & { kind: 'sync' }, assignment: Uint8Array): void {
    if (assignment.length === 0) return;
    const [tag, parts] = text(assignment).split('|') as [string, string];
    assert.equal(tag, tagOf(what.memberId, what.client.instanceId), 'a member gets its own assignment');
    let owners = this.owners.get(what.generationId);
    if (owners === undefined) this.owners.set(what.generationId, (owners = new Map()));
    for (const p of parts.split(',').filter((x) => x !== '').map(Number)) {
      const owner = owners.get(p);
      assert.ok(owner === undefined || owner === tag, `partition ${p} owned by ${owner} and ${tag} in generation ${what.generationId}`);
      owners.set(p, tag);
    }
  }

  /** Stops all activity: appends succeed, time runs out every session and rebalance. */
  drain(): void {
    this.h.autoAck = true;
    this.h.settleAll(true);
    for (let i = 0; i < 40; i++) {
      this.h.now += 5000;
      this.h.runTimers();
      this.h.settleAll(true);
    }
    this.observe();
    for (const ref of this.sent.keys()) assert.equal(this.h.replies.get(ref)?.length, 1, `call ${ref} answered once`);
  }
}

suite('coordinator properties', () => {
  it('random clients, ticks and append outcomes keep every invariant', () => {
    fc.assert(
      fc.property(
        fc.array(fc.boolean(), { minLength: SLOTS, maxLength: SLOTS }),
        fc.array(cmd, { minLength: 40, maxLength: 200, size: 'max' }),
        (statics, cmds) => {
          const m = new Model(statics);
          for (const c of cmds) m.run(c);
          m.drain();
        },
      ),
      { numRuns: 300 },
    );
  });

  it('offsets fetched equal the last acknowledged commit per partition', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ partition: fc.integer({ min: 0, max: 3 }), settleAt: fc.nat(), ok: fc.boolean() }), { maxLength: 40, size: 'max' }),
        (commits) => {
          const h = new Harness();
          h.autoAck = false;
          const acked = new Map<number, number>();
          const refs: { ref: number; partition: number; offset: number }[] = [];
          commits.forEach((c, i) => {
            refs.push({ ref: h.send(commitCall('', -1, { [`t:${c.partition}`]: i })), partition: c.partition, offset: i });
            if (h.pending.length > 0 && c.settleAt % 2 === 0) h.settle(c.ok, c.settleAt % h.pending.length);
          });
          while (h.pending.length > 0) h.settle(commits.length % 2 === 0, 0);
          for (const r of refs) {
            if (h.reply(r.ref, 'commit').topics[0]!.partitions[0]!.errorCode === ErrorCode.NONE) acked.set(r.partition, r.offset);
          }
          const f = h.ask({ kind: 'offsetFetch', groupId: 'g', topics: [{ name: 't', partitions: [0, 1, 2, 3] }], requireStable: false, memberId: null, memberEpoch: -1 });
          for (const p of f.topics[0]!.partitions) assert.equal(p.offset, acked.get(p.partition) ?? -1);
        },
      ),
      { numRuns: 300 },
    );
  });
});
