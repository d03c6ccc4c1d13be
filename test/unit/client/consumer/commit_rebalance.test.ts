// Our consumer's commits while its classic group is between JoinGroup and SyncGroup, against a
// fake coordinator (a one-member group that refuses commits with REBALANCE_IN_PROGRESS in
// CompletingRebalance, as Kafka's validateOffsetCommit): a commit refused there is retried once
// the sync completes, with the generation then current, and for at most commitTimeoutMs; a member
// that closes after its JoinGroup was answered still syncs that generation, so the commit its
// onRevoked makes lands.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Consumer } from '../../../../src/client/consumer/consumer.js';
import type { TopicPartition } from '../../../../src/client/consumer/types.js';
import { FindCoordinatorApi } from '../../../../src/protocol/apis/find_coordinator.js';
import { HeartbeatApi } from '../../../../src/protocol/apis/heartbeat.js';
import { JoinGroupApi } from '../../../../src/protocol/apis/join_group.js';
import { LeaveGroupApi } from '../../../../src/protocol/apis/leave_group.js';
import { OffsetCommitApi } from '../../../../src/protocol/apis/offset_commit.js';
import { OffsetFetchApi } from '../../../../src/protocol/apis/offset_fetch.js';
import type { OffsetFetchRequestTopic, OffsetFetchResponseTopic } from '../../../../src/protocol/apis/offset_fetch.js';
import { SyncGroupApi } from '../../../../src/protocol/apis/sync_group.js';
import { encodeAssignment } from '../../../../src/protocol/consumer_protocol.js';
import { ErrorCode, KafkaError } from '../../../../src/protocol/errors.js';
import { respond, twoBrokers } from '../fake_broker.js';
import type { FakeHandler, TwoBrokers } from '../fake_broker.js';

const MEMBER = 'member-1';
const T0: TopicPartition = { topic: 't', partition: 0 };

interface SeenCommit {
  readonly generation: number;
  readonly memberId: string;
  readonly offset: number;
  readonly answer: number;
}

/** A held-back answer and the call that lets it go. */
interface Held {
  readonly release: () => void;
}

/**
 * The coordinator of one group with one member that always owns t-0. The test asks for a
 * rebalance (the next Heartbeat answers REBALANCE_IN_PROGRESS) and may hold the next JoinGroup or
 * SyncGroup answer until it releases it.
 */
class FakeGroup {
  state: 'stable' | 'completing' = 'stable';
  generation = 0;
  rebalanceAsked = false;
  holdNextJoin = false;
  holdNextSync = false;
  heldJoin: Held | null = null;
  heldSync: Held | null = null;
  /** Refuse every commit with REBALANCE_IN_PROGRESS, as if the rebalance never completed. */
  refuseCommits = false;
  /** What the held SyncGroup is answered with: NONE, or REBALANCE_IN_PROGRESS for a rebalance begun meanwhile. */
  heldSyncAnswer: number = ErrorCode.NONE;
  /** Release the held SyncGroup answer when a commit is refused. */
  releaseSyncOnRefusal = false;
  readonly syncs: number[] = [];
  readonly commits: SeenCommit[] = [];

  handlers(port: () => number): Map<number, FakeHandler> {
    return new Map<number, FakeHandler>([
      [FindCoordinatorApi.key, (h, r) => {
        const req = FindCoordinatorApi.decodeRequest(h.apiVersion, r);
        const key = req.coordinatorKeys[0] ?? req.key;
        return respondFindCoordinator(h.apiVersion, h.correlationId, key, port());
      }],
      [JoinGroupApi.key, (h, r) => {
        const req = JoinGroupApi.decodeRequest(h.apiVersion, r);
        const answer = (): Buffer => {
          this.generation++;
          this.state = 'completing';
          this.rebalanceAsked = false;
          return respond(JoinGroupApi, h.apiVersion, h.correlationId, {
            throttleTimeMs: 0, errorCode: ErrorCode.NONE, generationId: this.generation, protocolType: 'consumer',
            protocolName: req.protocols[0]!.name, leader: MEMBER, skipAssignment: false, memberId: MEMBER,
            members: [{ memberId: MEMBER, groupInstanceId: null, metadata: req.protocols[0]!.metadata }],
          });
        };
        if (!this.holdNextJoin) return answer();
        this.holdNextJoin = false;
        return new Promise<Buffer>((resolve) => { this.heldJoin = { release: () => resolve(answer()) }; });
      }],
      [SyncGroupApi.key, (h, r) => {
        const req = SyncGroupApi.decodeRequest(h.apiVersion, r);
        this.syncs.push(req.generationId);
        const answer = (errorCode: number): Buffer => {
          if (errorCode === ErrorCode.NONE) this.state = 'stable';
          return respond(SyncGroupApi, h.apiVersion, h.correlationId, {
            throttleTimeMs: 0, errorCode, protocolType: 'consumer', protocolName: req.protocolName,
            assignment: errorCode === ErrorCode.NONE ? encodeAssignment({ assignedPartitions: [{ topic: 't', partitions: [0] }], userData: null }) : Buffer.alloc(0),
          });
        };
        if (!this.holdNextSync) return answer(ErrorCode.NONE);
        this.holdNextSync = false;
        return new Promise<Buffer>((resolve) => { this.heldSync = { release: () => resolve(answer(this.heldSyncAnswer)) }; });
      }],
      [HeartbeatApi.key, (h, r) => {
        HeartbeatApi.decodeRequest(h.apiVersion, r);
        const errorCode = this.rebalanceAsked ? ErrorCode.REBALANCE_IN_PROGRESS : ErrorCode.NONE;
        return respond(HeartbeatApi, h.apiVersion, h.correlationId, { throttleTimeMs: 0, errorCode });
      }],
      [OffsetCommitApi.key, (h, r) => {
        const req = OffsetCommitApi.decodeRequest(h.apiVersion, r);
        let errorCode: number = ErrorCode.NONE;
        if (req.memberId !== MEMBER || req.generationIdOrMemberEpoch !== this.generation) errorCode = ErrorCode.ILLEGAL_GENERATION;
        else if (this.state === 'completing' || this.refuseCommits) errorCode = ErrorCode.REBALANCE_IN_PROGRESS;
        for (const t of req.topics) {
          for (const p of t.partitions) {
            this.commits.push({ generation: req.generationIdOrMemberEpoch, memberId: req.memberId, offset: p.committedOffset, answer: errorCode });
          }
        }
        if (errorCode === ErrorCode.REBALANCE_IN_PROGRESS && this.releaseSyncOnRefusal) this.heldSync?.release();
        return respond(OffsetCommitApi, h.apiVersion, h.correlationId, {
          throttleTimeMs: 0,
          topics: req.topics.map((t) => ({ name: t.name, partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode })) })),
        });
      }],
      [OffsetFetchApi.key, (h, r) => {
        const req = OffsetFetchApi.decodeRequest(h.apiVersion, r);
        // No committed offsets yet, for every partition asked.
        const none = (topics: readonly OffsetFetchRequestTopic[]): OffsetFetchResponseTopic[] =>
          topics.map((t) => ({ name: t.name, partitions: t.partitionIndexes.map((partitionIndex) => ({ partitionIndex, committedOffset: -1, committedLeaderEpoch: -1, metadata: null, errorCode: 0 })) }));
        return respond(OffsetFetchApi, h.apiVersion, h.correlationId, {
          throttleTimeMs: 0, errorCode: 0, topics: none(req.topics ?? []),
          groups: req.groups.map((g) => ({ groupId: g.groupId, errorCode: 0, topics: none(g.topics ?? []) })),
        });
      }],
      [LeaveGroupApi.key, (h, r) => {
        const req = LeaveGroupApi.decodeRequest(h.apiVersion, r);
        return respond(LeaveGroupApi, h.apiVersion, h.correlationId, {
          throttleTimeMs: 0, errorCode: 0, members: req.members.map((m) => ({ memberId: m.memberId, groupInstanceId: m.groupInstanceId, errorCode: 0 })),
        });
      }],
    ]);
  }
}

function respondFindCoordinator(version: number, correlationId: number, key: string, port: number): Buffer {
  return respond(FindCoordinatorApi, version, correlationId, {
    throttleTimeMs: 0, errorCode: 0, errorMessage: null, nodeId: 0, host: '127.0.0.1', port,
    coordinators: [{ key, nodeId: 0, host: '127.0.0.1', port, errorCode: 0, errorMessage: null }],
  });
}

async function until(what: string, ok: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

async function started(group: FakeGroup): Promise<{ brokers: TwoBrokers; port: () => number }> {
  let port = 0;
  const brokers = await twoBrokers([group.handlers(() => port), new Map()]);
  port = brokers.fakes[0].port;
  return { brokers, port: () => port };
}

/** A consumer of topic t in group g (classic) against `group`, subscribed and holding t-0 while `body` runs; closed after. */
async function withMember(group: FakeGroup, commitTimeoutMs: number, body: (c: Consumer) => Promise<void>): Promise<void> {
  const { brokers, port } = await started(group);
  const c = new Consumer({
    brokers: [`127.0.0.1:${port()}`], groupId: 'g', groupProtocol: 'classic', heartbeatIntervalMs: 50, commitTimeoutMs,
  });
  try {
    await c.subscribe(['t']);
    await until('t-0 assigned', () => c.assignment().length === 1);
    await body(c);
  } finally {
    await c.close();
    await brokers.stop();
  }
}

describe('consumer commits during a classic rebalance', () => {
  it('retries a commit refused with REBALANCE_IN_PROGRESS, with the new generation, once the sync completes', { timeout: 20_000 }, async () => {
    const group = new FakeGroup();
    await withMember(group, 5000, async (c) => {
      assert.equal(group.generation, 1);
      // The next heartbeat starts a rebalance; the member rejoins (generation 2) and its sync is held.
      group.holdNextSync = true;
      group.releaseSyncOnRefusal = true;
      group.rebalanceAsked = true;
      await until('the sync of generation 2 held', () => group.heldSync !== null);
      await c.commit([{ ...T0, offset: 5 }]);
      assert.deepEqual(group.commits, [
        { generation: 2, memberId: MEMBER, offset: 5, answer: ErrorCode.REBALANCE_IN_PROGRESS },
        { generation: 2, memberId: MEMBER, offset: 5, answer: ErrorCode.NONE },
      ]);
    });
  });

  it('a retried commit carries the generation of the rebalance that completed, not the one it was refused in', { timeout: 20_000 }, async () => {
    const group = new FakeGroup();
    await withMember(group, 5000, async (c) => {
      // Generation 2's sync fails (another rebalance began): the member joins generation 3 and syncs it.
      group.holdNextSync = true;
      group.heldSyncAnswer = ErrorCode.REBALANCE_IN_PROGRESS;
      group.releaseSyncOnRefusal = true;
      group.rebalanceAsked = true;
      await until('the sync of generation 2 held', () => group.heldSync !== null);
      await c.commit([{ ...T0, offset: 6 }]);
      assert.deepEqual(group.commits[0], { generation: 2, memberId: MEMBER, offset: 6, answer: ErrorCode.REBALANCE_IN_PROGRESS });
      assert.deepEqual(group.commits.at(-1), { generation: 3, memberId: MEMBER, offset: 6, answer: ErrorCode.NONE });
      assert.deepEqual(group.syncs, [1, 2, 3]);
    });
  });

  it('gives up on REBALANCE_IN_PROGRESS after commitTimeoutMs when the coordinator keeps refusing', { timeout: 20_000 }, async () => {
    const group = new FakeGroup();
    await withMember(group, 600, async (c) => {
      // Held syncs would hold the commit answers behind them (one connection, answers in order), so
      // the coordinator simply keeps refusing.
      group.refuseCommits = true;
      const began = Date.now();
      await assert.rejects(c.commit([{ ...T0, offset: 5 }]), (err: unknown) => err instanceof KafkaError && err.code === ErrorCode.REBALANCE_IN_PROGRESS);
      const took = Date.now() - began;
      assert.ok(took >= 550 && took < 3000, `gave up after ${took} ms`);
      assert.ok(group.commits.length >= 2, 'retried before giving up');
      assert.ok(group.commits.every((x) => x.answer === ErrorCode.REBALANCE_IN_PROGRESS && x.generation === 1));
    });
  });

  it('a member closing after its JoinGroup is answered syncs that generation, so its commit in onRevoked lands', { timeout: 20_000 }, async () => {
    const group = new FakeGroup();
    const { brokers, port } = await started(group);
    const failures: string[] = [];
    const c: Consumer = new Consumer({
      brokers: [`127.0.0.1:${port()}`], groupId: 'g', groupProtocol: 'classic', heartbeatIntervalMs: 50,
      // Short: without the sync nothing ends the rebalance, and the commit would retry this long.
      commitTimeoutMs: 1000,
      listener: {
        onRevoked: async (ps) => {
          await c.commit(ps.map((p) => ({ ...p, offset: 7 }))).catch((err: unknown) => failures.push((err as Error).message));
        },
      },
    });
    try {
      await c.subscribe(['t']);
      await until('t-0 assigned', () => c.assignment().length === 1);
      group.holdNextJoin = true;
      group.rebalanceAsked = true;
      await until('the join of generation 2 held', () => group.heldJoin !== null);
      // close() marks the membership closing before the join is answered.
      const closing = c.close();
      await new Promise((r) => setTimeout(r, 50));
      group.heldJoin?.release();
      await closing;
      assert.deepEqual(failures, []);
      assert.deepEqual(group.syncs, [1, 2], 'generation 2 synced although closing');
      assert.deepEqual(group.commits.at(-1), { generation: 2, memberId: MEMBER, offset: 7, answer: ErrorCode.NONE });
    } finally {
      await c.close();
      await brokers.stop();
    }
  });
});
