// KIP-848 consumer group under random member activity: simulated clients join, heartbeat (some
// responses lost), change subscriptions, leave, leave temporarily (static), crash and restart,
// while time passes, topics grow and the coordinator reloads the group from its latest record.
// Clients are honest: they consume what the last answer they saw assigned them plus what they
// have not finished revoking (and report both as owned), drop everything when fenced, and fence
// themselves after a session timeout without answers. Checked throughout: no partition is
// consumed by two clients at once; a partition that stays in a member's target is never taken
// from it; the latest record rebuilds an identical group. Checked once activity quiesces: every
// partition is owned by exactly one client and every member is at the group epoch.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import type { Assignor } from '../../../src/assignors/assignor.js';
import { RangeAssignor } from '../../../src/assignors/range.js';
import { UniformAssignor } from '../../../src/assignors/uniform.js';
import { ConsumerGroup } from '../../../src/coordinator/groups/consumer_group.js';
import {
  DEFAULT_GROUP_CONFIG, type ConsumerHeartbeatCall, type ConsumerHeartbeatReply, type GroupConfig, type GroupRecord, type TopicIndex, type TopicInfo,
} from '../../../src/coordinator/groups/group_api.js';
import { ErrorCode } from '../../../src/protocol/errors.js';
import type { ConsumerGroupValue } from '../../../src/coordinator/groups/consumer_group_value.js';
import { viaLog } from './group_fixture.js';

const CONFIG: GroupConfig = { ...DEFAULT_GROUP_CONFIG, maxGroupSize: 50 };
const SESSION = CONFIG.consumerSessionTimeoutMs;
const REBALANCE_TIMEOUT = 60_000;
/** Live clients heartbeat at least this often, well inside the session timeout. */
const HEARTBEAT_EVERY = 15_000;
const TOPIC_NAMES = ['a', 'b', 'c'] as const;

type Action =
  /** `finish`: the client has finished revoking what it was told to give up (a callback ran). */
  | { kind: 'heartbeat'; who: number; lose: boolean; finish: boolean }
  | { kind: 'subscribe'; who: number; topics: number }
  | { kind: 'leave'; who: number }
  | { kind: 'staticLeave'; who: number }
  | { kind: 'crash'; who: number }
  | { kind: 'restart'; who: number }
  | { kind: 'advance'; ms: number }
  | { kind: 'grow'; topic: number; by: number }
  /** The coordinator moves or restarts: a new group is rebuilt from the latest record. */
  | { kind: 'reload' };

interface Client {
  readonly instanceId: string | null;
  memberId: string;
  incarnation: number;
  /** 0 = must (re)join. */
  epoch: number;
  owned: Map<string, Set<number>>;
  /** Taken away by the coordinator but still consumed until the client finishes revoking. */
  revoking: Map<string, Set<number>>;
  alive: boolean;
  subscription: string[];
  subscriptionSent: boolean;
  /** What the last request reported as owned; null = send a full request next. */
  ownedSent: string | null;
  lastRequest: number;
  lastAnswer: number;
}

class Simulation {
  group: ConsumerGroup;
  readonly assignor: string;
  readonly clients: Client[];
  partitions = [3, 4, 2];
  topics: TopicIndex = this.index();
  now = 0;
  latestValue: ConsumerGroupValue | null | undefined = undefined;

  constructor(clientCount: number, assignor: string) {
    this.assignor = assignor;
    this.group = newGroup({ ...CONFIG, consumerAssignors: [assignor] });
    this.clients = Array.from({ length: clientCount }, (_, i) => ({
      instanceId: i % 2 === 0 ? `instance-${i}` : null, memberId: '', incarnation: 0, epoch: 0, owned: new Map(), revoking: new Map(), alive: true,
      subscription: [TOPIC_NAMES[i % 3]!, TOPIC_NAMES[(i + 1) % 3]!], subscriptionSent: false, ownedSent: null, lastRequest: 0, lastAnswer: 0,
    }));
  }

  index(): TopicIndex {
    const infos: TopicInfo[] = TOPIC_NAMES.map((name, t) => ({ name, id: String(t + 1).padStart(32, '0'), partitions: this.partitions[t]! }));
    return { byName: new Map(infos.map((i) => [i.name, i])), byId: new Map(infos.map((i) => [i.id, i])) };
  }

  run(action: Action): void {
    const client = 'who' in action ? this.clients[action.who % this.clients.length]! : undefined;
    switch (action.kind) {
      case 'heartbeat': if (client!.alive) this.heartbeat(client!, action.lose, action.finish); break;
      case 'subscribe':
        client!.subscription = TOPIC_NAMES.filter((_, t) => (action.topics >> t) & 1);
        if (client!.subscription.length === 0) client!.subscription = ['a'];
        client!.subscriptionSent = false;
        break;
      case 'leave': if (client!.alive && client!.epoch > 0) this.leave(client!, -1); break;
      case 'staticLeave': if (client!.alive && client!.epoch > 0 && client!.instanceId !== null) this.leave(client!, -2); break;
      case 'crash': client!.alive = false; this.dropAll(client!); break;
      case 'restart': if (!client!.alive) { client!.alive = true; this.newIncarnation(client!); } break;
      case 'advance': this.advance(action.ms); break;
      case 'grow':
        this.partitions[action.topic % 3]! += action.by;
        this.topics = this.index();
        this.keep(this.group.topicsChanged(this.now, this.topics));
        break;
      case 'reload':
        this.group = this.reloaded();
        break;
    }
    this.checkOwnership();
    this.checkReplay();
  }

  heartbeat(client: Client, lose: boolean, finish = true): void {
    if (finish) client.revoking = new Map();
    const request = this.request(client);
    const before = this.group.describe(this.topics);
    const result = this.group.heartbeat(request, this.now, this.topics);
    this.keep(result.records);
    client.lastRequest = this.now;
    if (lose) {
      // No answer (a timeout, to the client): its next request is a full one.
      client.ownedSent = null;
      return;
    }
    this.answer(client, request, result.reply, before);
  }

  request(client: Client): ConsumerHeartbeatCall {
    const base = { kind: 'consumerHeartbeat', groupId: 'g', instanceId: client.instanceId, rackId: null, subscribedTopicRegex: null, serverAssignor: null, clientId: 'sim', clientHost: '/127.0.0.1' } as const;
    if (client.epoch === 0) {
      assert.equal(client.owned.size + client.revoking.size, 0, 'a client joins owning nothing');
      return { ...base, memberId: client.memberId, memberEpoch: 0, rebalanceTimeoutMs: REBALANCE_TIMEOUT, subscribedTopicNames: client.subscription, ownedPartitions: [] };
    }
    const owned = [...held(client)].map(([topicId, set]) => ({ topicId, partitions: [...set].sort((x, y) => x - y) }));
    const key = JSON.stringify(owned);
    const full = client.ownedSent === null;
    return {
      ...base, memberId: client.memberId, memberEpoch: client.epoch,
      rebalanceTimeoutMs: full ? REBALANCE_TIMEOUT : -1,
      subscribedTopicNames: full || !client.subscriptionSent ? client.subscription : null,
      ownedPartitions: full || key !== client.ownedSent ? owned : null,
    };
  }

  answer(client: Client, request: ConsumerHeartbeatCall, reply: ConsumerHeartbeatReply, before: ReturnType<ConsumerGroup['describe']>): void {
    if (reply.errorCode === ErrorCode.FENCED_MEMBER_EPOCH || reply.errorCode === ErrorCode.UNKNOWN_MEMBER_ID) {
      this.dropAll(client);
      return;
    }
    // The old incarnation still holds the instance id: retry on a later heartbeat.
    if (reply.errorCode === ErrorCode.UNRELEASED_INSTANCE_ID) return;
    assert.equal(reply.errorCode, ErrorCode.NONE, reply.errorMessage ?? '');
    client.memberId = reply.memberId!;
    client.epoch = reply.memberEpoch;
    client.lastAnswer = this.now;
    if (request.subscribedTopicNames !== null) client.subscriptionSent = true;
    if (request.ownedPartitions !== null) client.ownedSent = JSON.stringify(request.ownedPartitions);
    if (reply.assignment === null) return;
    const after = this.group.describe(this.topics).members.find((m) => m.memberId === client.memberId)!;
    const wasMember = before.members.some((m) => m.memberId === client.memberId);
    const next = new Map(reply.assignment.map((t) => [t.topicId, new Set(t.partitions)]));
    for (const [topicId, set] of client.owned) {
      const target = new Set(after.targetAssignment.find((t) => t.topicId === topicId)?.partitions);
      for (const p of set) {
        if (next.get(topicId)?.has(p)) continue;
        if (wasMember) assert.ok(!target.has(p), `${client.memberId} lost ${topicId}:${p} although its target keeps it`);
        addTo(client.revoking, topicId, p);
      }
    }
    for (const [topicId, set] of next) for (const p of set) client.revoking.get(topicId)?.delete(p);
    client.owned = next;
  }

  leave(client: Client, epoch: -1 | -2): void {
    const result = this.group.heartbeat({
      kind: 'consumerHeartbeat', groupId: 'g', memberId: client.memberId, memberEpoch: epoch, instanceId: client.instanceId, rackId: null,
      rebalanceTimeoutMs: -1, subscribedTopicNames: null, subscribedTopicRegex: null, serverAssignor: null, ownedPartitions: null, clientId: 'sim', clientHost: '/127.0.0.1',
    }, this.now, this.topics);
    this.keep(result.records);
    assert.ok([ErrorCode.NONE, ErrorCode.UNKNOWN_MEMBER_ID].includes(result.reply.errorCode as 0 | 25), result.reply.errorMessage ?? '');
    this.dropAll(client);
    if (epoch === -2) this.newIncarnation(client);
  }

  /** A new process: Kafka 4 clients make their own member id; half of them let the coordinator do it. */
  newIncarnation(client: Client): void {
    client.incarnation++;
    client.memberId = client.incarnation % 2 === 0 ? '' : `${client.instanceId ?? 'dynamic'}-${this.clients.indexOf(client)}-${client.incarnation}`;
    this.dropAll(client);
  }

  dropAll(client: Client): void {
    client.owned = new Map();
    client.revoking = new Map();
    client.epoch = 0;
    client.ownedSent = null;
    client.subscriptionSent = false;
  }

  advance(ms: number): void {
    this.now += ms;
    for (const client of this.clients) {
      if (!client.alive) continue;
      // The client's own safety timer: silent coordinator for a session timeout → let everything go.
      if (client.epoch > 0 && this.now - client.lastAnswer >= SESSION) this.dropAll(client);
      if (this.now - client.lastRequest >= HEARTBEAT_EVERY) this.heartbeat(client, false);
    }
    this.keep(this.group.tick(this.now, this.topics).records);
  }

  keep(records: GroupRecord[]): void {
    for (const r of records) {
      assert.equal(r.kind, 'consumerGroup');
      this.latestValue = r.value;
    }
  }

  checkOwnership(): void {
    const seen = new Map<string, number>();
    this.clients.forEach((client, i) => {
      for (const [topicId, set] of held(client)) {
        for (const p of set) {
          const key = `${topicId}:${p}`;
          assert.equal(seen.has(key), false, `${key} owned by clients ${seen.get(key)} and ${i}`);
          seen.set(key, i);
        }
      }
    });
  }

  reloaded(): ConsumerGroup {
    const copy = newGroup({ ...CONFIG, consumerAssignors: [this.assignor] });
    if (this.latestValue !== undefined) copy.replay(viaLog('g', this.latestValue), this.now);
    return copy;
  }

  checkReplay(): void {
    assert.deepEqual(this.reloaded().describe(this.topics), this.group.describe(this.topics));
  }

  /** Crashed clients stay down; everyone else heartbeats, without losses, until all is settled. */
  quiesce(): void {
    for (let step = 0; step < 8; step++) this.advance(10_000);
    for (let round = 0; round < 10; round++) {
      for (const client of this.clients) if (client.alive) this.heartbeat(client, false);
    }
    this.checkOwnership();
  }
}

function addTo(map: Map<string, Set<number>>, topicId: string, p: number): void {
  let set = map.get(topicId);
  if (set === undefined) {
    set = new Set();
    map.set(topicId, set);
  }
  set.add(p);
}

/** What a client consumes: its assignment and what it has not finished revoking. */
function held(client: Client): Map<string, Set<number>> {
  const out = new Map<string, Set<number>>();
  for (const map of [client.owned, client.revoking]) for (const [topicId, set] of map) for (const p of set) addTo(out, topicId, p);
  return out;
}

/** Shared by every group instance, as random ids would be: a reloaded group must not repeat ids. */
let madeIds = 0;

function newGroup(config: GroupConfig): ConsumerGroup {
  const assignors = new Map<string, Assignor>([['uniform', new UniformAssignor()], ['range', new RangeAssignor()]]);
  return new ConsumerGroup('g', config, assignors, () => `coordinator-made-${++madeIds}`);
}

const action: fc.Arbitrary<Action> = fc.oneof(
  { weight: 12, arbitrary: fc.record({
    kind: fc.constant('heartbeat' as const), who: fc.nat(), lose: fc.integer({ min: 0, max: 4 }).map((n) => n === 0), finish: fc.integer({ min: 0, max: 2 }).map((n) => n > 0),
  }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('subscribe' as const), who: fc.nat(), topics: fc.integer({ min: 1, max: 7 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('leave' as const), who: fc.nat() }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('staticLeave' as const), who: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('crash' as const), who: fc.nat() }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('restart' as const), who: fc.nat() }) },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 100, max: 10_000 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('grow' as const), topic: fc.nat(), by: fc.integer({ min: 1, max: 3 }) }) },
  { weight: 3, arbitrary: fc.constant({ kind: 'reload' as const }) },
);

describe('ConsumerGroup under random member activity', () => {
  for (const assignor of ['uniform', 'range']) {
    it(`never lets two clients own a partition and converges once activity stops (${assignor})`, () => {
      fc.assert(fc.property(fc.integer({ min: 1, max: 6 }), fc.array(action, { maxLength: 80 }), (clientCount, actions) => {
        const sim = new Simulation(clientCount, assignor);
        for (const a of actions) sim.run(a);
        sim.quiesce();
        const group = sim.group.describe(sim.topics);
        const live = sim.clients.filter((c) => c.alive);
        assert.equal(group.state, live.length === 0 ? 'Empty' : 'Stable');
        assert.equal(group.members.length, live.length);
        for (const m of group.members) {
          assert.equal(m.memberEpoch, group.groupEpoch);
          assert.deepEqual(m.assignment, m.targetAssignment);
          const client = live.find((c) => c.memberId === m.memberId)!;
          const owned = [...client.owned].flatMap(([t, set]) => [...set].map((p) => `${t}:${p}`)).sort();
          assert.deepEqual(owned, m.assignment.flatMap((t) => t.partitions.map((p) => `${t.topicId}:${p}`)).sort());
        }
        const subscribed = new Set(live.flatMap((c) => c.subscription));
        let expected = 0;
        for (const info of sim.topics.byId.values()) if (subscribed.has(info.name)) expected += info.partitions;
        assert.equal(live.reduce((n, c) => n + [...c.owned.values()].reduce((k, s) => k + s.size, 0), 0), expected);
      }), { numRuns: 250 });
    });
  }
});
