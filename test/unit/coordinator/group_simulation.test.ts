// Seeded deterministic simulation of the group coordinator with simulated clients: a tiny client
// model (join -> sync -> heartbeat loop, rejoin on REBALANCE_IN_PROGRESS, offset commits), some
// clients crashing, some slow, some leaving, static members restarting; a simulated clock;
// appends that fail or are reported late and out of order; coordinator restarts that reload the
// durable log and lose every parked call (clients time out and retry). Invariants are checked
// at every step and the failing seed is printed.
import assert from 'node:assert/strict';
import { describe as suite, it } from 'node:test';
import { GroupCoordinator, type CoordinatorDeps } from '../../../src/coordinator/groups/group_coordinator.js';
import type { GroupCall, GroupEffect, GroupRecord, GroupReply, JoinReply } from '../../../src/coordinator/groups/group_api.js';
import { ErrorCode } from '../../../src/protocol/errors.js';
import { commitCall, heartbeatCall, joinCall, leaveCall, meta, syncCall, testDeps, text } from './group_fixture.js';
import { mulberry32 } from '../../helpers/seeded_random.js';

const STEP_MS = 100;
const SESSION_MS = 10_000;
const REBALANCE_MS = 15_000;
const HEARTBEAT_MS = 3_000;
const PARTITIONS = 8;
const GROUPS = ['g0', 'g1'];
const CLIENTS_PER_GROUP = 5;

class SimClient {
  alive = true;
  phase: 'idle' | 'joining' | 'joined' | 'syncing' | 'stable' = 'idle';
  memberId = '';
  join: JoinReply | null = null;
  owned: number[] = [];
  /** The join or sync in flight (one at a time, like real clients) and the heartbeat in flight. */
  main: { ref: number; sentAt: number } | null = null;
  beat: { ref: number; sentAt: number } | null = null;
  notBefore = 0;
  nextBeat = 0;
  nextCommit = 0;

  constructor(readonly name: string, readonly groupId: string, readonly instanceId: string | null, readonly slow: boolean) {}

  get tag(): string {
    return this.instanceId ?? this.memberId;
  }
}

interface Sent {
  readonly client: SimClient;
  readonly kind: 'join' | 'sync' | 'heartbeat' | 'commit' | 'leave';
  readonly epoch: number;
  readonly generationId: number;
  readonly offsets: readonly [number, number][];
}

class Simulation {
  private readonly rng: () => number;
  private readonly deps: CoordinatorDeps = testDeps({
    minSessionTimeoutMs: 1000, initialRebalanceDelayMs: 1000, maxGroupSize: 20, maxGroups: 10,
  });
  private coord = new GroupCoordinator(this.deps);
  /** Coordinator incarnation: calls to an earlier one are lost. */
  private epoch = 0;
  private now = 0;
  private nextRef = 1;
  private faults = true;
  private readonly durable: GroupRecord[] = [];
  private reports: { token: number; ok: boolean; at: number }[] = [];
  private readonly sent = new Map<number, Sent>();
  private readonly answered = new Set<number>();
  private readonly clients: SimClient[] = [];
  private readonly owners = new Map<string, Map<number, string>>();
  private readonly acked = new Map<string, number>();
  private readonly nextValue = new Map<string, number>();
  private readonly restarts: { at: number; instanceId: string; groupId: string }[] = [];
  private spawned = 0;

  constructor(readonly seed: number) {
    this.rng = mulberry32(seed);
    for (const g of GROUPS) for (let i = 0; i < CLIENTS_PER_GROUP; i++) this.spawn(g, i < 2 ? `${g}-s${i}` : null);
  }

  run(): void {
    for (let i = 0; i < 3000; i++) this.step(i);
    this.faults = false;
    for (let i = 0; i < 600; i++) this.step(i);
    this.checkConverged();
    for (const c of this.clients) c.alive = false;
    for (let i = 0; i < 600; i++) {
      this.now += 1000;
      this.timers();
      this.deliverReports(true);
    }
    for (const [ref, s] of this.sent) {
      if (s.epoch === this.epoch) assert.ok(this.answered.has(ref), `call ${ref} (${s.kind}) of the last coordinator never answered`);
    }
  }

  private step(i: number): void {
    this.now += STEP_MS;
    if (this.faults) this.chaos();
    this.timers();
    this.deliverReports(false);
    for (const c of this.clients) if (c.alive) this.act(c);
    if (i % 10 === 0) this.checkOffsets();
    if (i % 100 === 0 && this.reports.length === 0) this.checkReplay();
  }

  // ---- world ----

  private chaos(): void {
    const r = this.rng;
    if (r() < 0.0015) this.restartCoordinator();
    const live = this.clients.filter((c) => c.alive);
    const victim = live[Math.floor(r() * live.length)];
    if (victim !== undefined && r() < 0.006) {
      victim.alive = false;
      if (victim.instanceId !== null) this.restarts.push({ at: this.now + 1000 + r() * 14_000, instanceId: victim.instanceId, groupId: victim.groupId });
    } else if (victim !== undefined && victim.instanceId === null && victim.phase === 'stable' && r() < 0.003) {
      this.call(victim, 'leave', leaveCall([{ memberId: victim.memberId }], victim.groupId), []);
      victim.alive = false;
    }
    for (const g of GROUPS) {
      const count = this.clients.filter((c) => c.alive && c.groupId === g).length;
      if (count < CLIENTS_PER_GROUP && r() < 0.01) this.spawn(g, null);
    }
    for (const due of this.restarts.filter((x) => x.at <= this.now)) {
      this.restarts.splice(this.restarts.indexOf(due), 1);
      this.spawn(due.groupId, due.instanceId);
    }
  }

  private spawn(groupId: string, instanceId: string | null): void {
    this.clients.push(new SimClient(`c${this.spawned++}`, groupId, instanceId, this.rng() < 0.3));
  }

  private restartCoordinator(): void {
    this.epoch++;
    this.reports = [];
    this.coord = new GroupCoordinator(this.deps);
    this.coord.load(this.durable, this.now);
  }

  private timers(): void {
    for (let i = 0; i < 20; i++) {
      const d = this.coord.nextDeadline();
      if (d === null || d > this.now) return;
      this.absorb(this.coord.tick(this.now));
    }
    assert.fail('tick keeps finding work at the same instant');
  }

  /** Outcomes reach the coordinator late and in any order; the log itself was written in order. */
  private deliverReports(all: boolean): void {
    const due = this.reports.filter((x) => all || x.at <= this.now);
    this.reports = this.reports.filter((x) => !due.includes(x));
    for (let i = due.length - 1; i > 0; i--) {
      const j = Math.floor(this.rng() * (i + 1));
      [due[i], due[j]] = [due[j]!, due[i]!];
    }
    for (const d of due) this.absorb(this.coord.appended(d.token, d.ok, this.now));
  }

  private absorb(effects: GroupEffect[]): void {
    for (const e of effects) {
      if (e.kind === 'reply') {
        this.deliver(e.ref, e.reply);
      } else if (e.kind === 'append') {
        const ok = !this.faults || this.rng() > 0.07;
        if (ok) this.durable.push(...e.records);
        this.reports.push({ token: e.token, ok, at: this.now + Math.floor(this.rng() * 400) });
      }
    }
  }

  private call(c: SimClient, kind: Sent['kind'], call: GroupCall, offsets: [number, number][]): number {
    const ref = this.nextRef++;
    this.sent.set(ref, { client: c, kind, epoch: this.epoch, generationId: c.join?.generationId ?? -1, offsets });
    this.absorb(this.coord.handle(ref, call, this.now));
    return ref;
  }

  // ---- clients ----

  private act(c: SimClient): void {
    if (c.main !== null && this.now - c.main.sentAt > (c.phase === 'joining' ? REBALANCE_MS + 5000 : 8000)) {
      c.main = null; // lost with a coordinator restart
      if (c.phase === 'joining' || c.phase === 'syncing') c.phase = 'idle';
    }
    if (c.beat !== null && this.now - c.beat.sentAt > 8000) c.beat = null;
    if (this.now < c.notBefore) return;
    if (c.phase === 'idle' && c.main === null) this.sendJoin(c);
    else if (c.phase === 'joined' && c.main === null) this.sendSync(c);
    else if (c.phase === 'stable') this.stableWork(c);
  }

  private sendJoin(c: SimClient): void {
    c.phase = 'joining';
    const ref = this.call(c, 'join', joinCall({
      groupId: c.groupId, memberId: c.memberId, groupInstanceId: c.instanceId, clientId: c.name, requireKnownMemberId: true,
      sessionTimeoutMs: SESSION_MS, rebalanceTimeoutMs: REBALANCE_MS,
    }), []);
    if (c.phase === 'joining') c.main = { ref, sentAt: this.now };
  }

  private sendSync(c: SimClient): void {
    const j = c.join!;
    c.phase = 'syncing';
    const assignments = j.leader === j.memberId && !j.skipAssignment ? leaderAssignment(j.members) : [];
    const ref = this.call(c, 'sync', syncCall(j.memberId, j.generationId, { groupId: c.groupId, groupInstanceId: c.instanceId, assignments }), []);
    if (c.phase === 'syncing') c.main = { ref, sentAt: this.now };
  }

  private stableWork(c: SimClient): void {
    const j = c.join!;
    if (c.beat === null && this.now >= c.nextBeat) {
      c.nextBeat = this.now + HEARTBEAT_MS + (c.slow ? Math.floor(this.rng() * 3000) : 0);
      const ref = this.call(c, 'heartbeat', heartbeatCall(j.memberId, j.generationId, { groupId: c.groupId, groupInstanceId: c.instanceId }), []);
      if (!this.answered.has(ref)) c.beat = { ref, sentAt: this.now };
    }
    // Commits are asynchronous, as with auto-commit: several may be in flight at once.
    if (c.phase === 'stable' && this.now >= c.nextCommit && c.owned.length > 0) {
      c.nextCommit = this.now + 200 + Math.floor(this.rng() * 2000);
      const offsets: [number, number][] = c.owned.map((p) => [p, this.value(c.groupId, p)]);
      const call = commitCall(j.memberId, j.generationId, Object.fromEntries(offsets.map(([p, v]) => [`t:${p}`, v])), {
        groupId: c.groupId, groupInstanceId: c.instanceId,
      });
      this.call(c, 'commit', call, offsets);
    }
  }

  private value(groupId: string, p: number): number {
    const key = `${groupId}/${p}`;
    const v = (this.nextValue.get(key) ?? 0) + 1;
    this.nextValue.set(key, v);
    return v;
  }

  private deliver(ref: number, reply: GroupReply): void {
    assert.ok(!this.answered.has(ref), `call ${ref} answered twice`);
    this.answered.add(ref);
    const s = this.sent.get(ref)!;
    const c = s.client;
    if (c.main?.ref === ref) c.main = null;
    if (c.beat?.ref === ref) c.beat = null;
    if (s.kind === 'commit' && reply.kind === 'commit') this.onCommitted(s, reply);
    if (s.kind === 'sync' && reply.kind === 'sync' && reply.errorCode === ErrorCode.NONE) this.own(s, reply.assignment);
    if (!c.alive || s.kind === 'leave' || s.kind === 'commit') return;
    if (reply.kind === 'join') this.onJoin(c, reply);
    else if (reply.kind === 'sync' && c.phase === 'syncing') this.onSync(c, reply.errorCode);
    else if (reply.kind === 'heartbeat' && c.phase === 'stable' && s.generationId === c.join?.generationId) this.onError(c, reply.errorCode);
  }

  private onJoin(c: SimClient, r: JoinReply): void {
    if (c.phase !== 'joining') return;
    if (r.errorCode === ErrorCode.NONE) {
      c.memberId = r.memberId;
      c.join = r;
      c.phase = 'joined';
      c.notBefore = this.now + (c.slow ? Math.floor(this.rng() * 4000) : 0);
    } else if (r.errorCode === ErrorCode.MEMBER_ID_REQUIRED) {
      c.memberId = r.memberId;
      c.phase = 'idle';
    } else {
      this.onError(c, r.errorCode);
    }
  }

  private onSync(c: SimClient, errorCode: number): void {
    if (errorCode !== ErrorCode.NONE) return this.onError(c, errorCode);
    c.phase = 'stable';
    c.nextBeat = this.now + HEARTBEAT_MS;
  }

  /** Any error: give up the partitions and rejoin (forgetting the id when it is unknown). */
  private onError(c: SimClient, errorCode: number): void {
    if (errorCode === ErrorCode.NONE || errorCode === ErrorCode.COORDINATOR_NOT_AVAILABLE && c.phase === 'stable') return;
    c.owned = [];
    c.phase = 'idle';
    c.notBefore = this.now + 200;
    if (errorCode === ErrorCode.UNKNOWN_MEMBER_ID) c.memberId = '';
    if (errorCode === ErrorCode.FENCED_INSTANCE_ID) c.alive = false;
  }

  // ---- invariants ----

  /** At most one owner per partition per generation; each member gets its own assignment. */
  private own(s: Sent, assignment: Uint8Array): void {
    const c = s.client;
    const owned = assignment.length === 0 ? [] : parse(text(assignment), s.client.instanceId ?? c.join!.memberId);
    if (c.alive && c.phase === 'syncing') c.owned = owned;
    const key = `${c.groupId}/${s.generationId}`;
    let owners = this.owners.get(key);
    if (owners === undefined) this.owners.set(key, (owners = new Map()));
    for (const p of owned) {
      const owner = owners.get(p);
      assert.ok(owner === undefined || owner === c.tag, `seed ${this.seed}: ${c.groupId} partition ${p} owned by ${owner} and ${c.tag} in generation ${s.generationId}`);
      owners.set(p, c.tag);
    }
  }

  private onCommitted(s: Sent, reply: Extract<GroupReply, { kind: 'commit' }>): void {
    for (const t of reply.topics) {
      for (const p of t.partitions) {
        if (p.errorCode !== ErrorCode.NONE) continue;
        const value = s.offsets.find(([q]) => q === p.partition)![1];
        const key = `${s.client.groupId}/${p.partition}`;
        assert.ok(value > (this.acked.get(key) ?? 0), 'acknowledged commits apply in the order they were made');
        this.acked.set(key, value);
      }
    }
  }

  /** Acknowledged commits are never lost, not even across restarts. */
  private checkOffsets(): void {
    const committed = new Map<string, number>();
    for (const [g, { offsets }] of this.coord.committedOffsets()) for (const o of offsets) committed.set(`${g}/${o.partition}`, o.offset);
    for (const [key, value] of this.acked) assert.ok((committed.get(key) ?? 0) >= value, `${key}: acknowledged ${value}, committed ${committed.get(key)}`);
  }

  /** With no outcome outstanding, memory equals a replay of the durable log. */
  private checkReplay(): void {
    const fresh = new GroupCoordinator(this.deps);
    fresh.load(this.durable, this.now);
    const offsetsOf = (c: GroupCoordinator): Map<string, unknown> => new Map([...c.committedOffsets()].map(([g, o]) => [g, o.offsets]));
    assert.deepEqual(offsetsOf(fresh), offsetsOf(this.coord));
  }

  /** After a quiet minute every group with live members is Stable and owns every partition once. */
  private checkConverged(): void {
    for (const g of GROUPS) {
      const live = this.clients.filter((c) => c.alive && c.groupId === g);
      if (live.length === 0) continue;
      const d = this.ask({ kind: 'describe', groupIds: [g] });
      assert.ok(d.kind === 'describe');
      assert.equal(d.groups[0]!.state, 'Stable', `${g} not Stable`);
      assert.equal(d.groups[0]!.members.length, live.length, `${g}: members vs live clients`);
      const gens = new Set(live.map((c) => `${c.phase}/${c.join?.generationId}`));
      assert.equal(gens.size, 1, `${g}: clients disagree: ${[...gens].join(' ')}`);
      assert.deepEqual(live.flatMap((c) => c.owned).sort((a, b) => a - b), [...Array(PARTITIONS).keys()], `${g}: partitions owned`);
    }
  }

  private ask(call: GroupCall): GroupReply {
    const effects = this.coord.handle(this.nextRef++, call, this.now);
    const r = effects.find((e) => e.kind === 'reply');
    assert.ok(r !== undefined && r.kind === 'reply');
    return r.reply;
  }
}

/** The test-side leader: partitions dealt round-robin over the members in id order, `tag|p,p`. */
function leaderAssignment(members: JoinReply['members']): { memberId: string; assignment: Uint8Array }[] {
  const sorted = [...members].sort((a, b) => (a.memberId < b.memberId ? -1 : 1));
  return sorted.map((m, i) => {
    const parts: number[] = [];
    for (let p = i; p < PARTITIONS; p += sorted.length) parts.push(p);
    return { memberId: m.memberId, assignment: meta(`${m.groupInstanceId ?? m.memberId}|${parts.join(',')}`) };
  });
}

function parse(assignment: string, expectedTag: string): number[] {
  const [tag, parts] = assignment.split('|') as [string, string];
  assert.equal(tag, expectedTag, 'a member gets its own assignment');
  return parts.split(',').filter((x) => x !== '').map(Number);
}

suite('group coordinator simulation', () => {
  for (const seed of [1, 2, 3, 4, 5, 6, 7, 8]) {
    it(`seed ${seed}`, () => {
      try {
        new Simulation(seed).run();
      } catch (err) {
        console.error(`group simulation failed with seed ${seed}`);
        throw err;
      }
    });
  }
});
