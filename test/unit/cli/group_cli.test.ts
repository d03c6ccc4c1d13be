// `sluice group ...` in-process (runCli with captured output) against a fake broker that keeps
// topics (record timestamps per partition), classic and KIP-848 groups and committed offsets in
// memory: list/describe/seek/delete output in text and JSON, lag in records and seconds, the
// errors of active groups, usage errors before any traffic, and the pure seek arithmetic.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cliInProcess } from '../../helpers/cli_run.js';
import { seekOffset } from '../../../src/cli/group.js';
import type { SeekTarget } from '../../../src/cli/group.js';
import { encodeRecordBatch } from '../../../src/protocol/records.js';
import { ConsumerGroupDescribeApi } from '../../../src/protocol/apis/consumer_group_describe.js';
import { DeleteGroupsApi } from '../../../src/protocol/apis/delete_groups.js';
import { DescribeConfigsApi } from '../../../src/protocol/apis/describe_configs.js';
import { DescribeGroupsApi } from '../../../src/protocol/apis/describe_groups.js';
import { FetchApi } from '../../../src/protocol/apis/fetch.js';
import { ListGroupsApi } from '../../../src/protocol/apis/list_groups.js';
import { ListOffsetsApi } from '../../../src/protocol/apis/list_offsets.js';
import { MetadataApi } from '../../../src/protocol/apis/metadata.js';
import { OffsetCommitApi } from '../../../src/protocol/apis/offset_commit.js';
import { OffsetFetchApi } from '../../../src/protocol/apis/offset_fetch.js';
import { encodeAssignment } from '../../../src/protocol/consumer_protocol.js';
import { ErrorCode } from '../../../src/protocol/errors.js';
import { FakeBroker, respond } from '../client/fake_broker.js';
import type { FakeHandler } from '../client/fake_broker.js';

const T0 = 1_700_000_000_000;
const NO_OPS = -2147483648;
const NO_LEADER = { leaderId: -1, leaderEpoch: -1 };
/** The fake log groups records in batches of this many, so a fetch may start inside one. */
const BATCH = 4;

interface FakeMember { memberId: string; clientId: string; host: string; assignment: Buffer }
interface FakeGroup { state: string; protocol: string; members: FakeMember[]; offsets: Map<string, number> }

interface World {
  /** Record timestamps per partition; offsets are indexes. */
  topics: Map<string, number[][]>;
  groups: Map<string, FakeGroup>;
}

const key = (topic: string, partition: number): string => `${topic}/${partition}`;

function batchAt(timestamps: readonly number[], offset: number): Buffer {
  const base = Math.floor(offset / BATCH) * BATCH;
  const records = timestamps.slice(base, base + BATCH).map((timestamp, i) => ({ key: null, value: Buffer.from(`r${base + i}`), timestamp }));
  const batch = encodeRecordBatch(records);
  batch.writeBigInt64BE(BigInt(base), 0); // outside the CRC
  return batch;
}

function listOffset(log: readonly number[], ts: number): number {
  if (ts === -2) return 0;
  if (ts === -1) return log.length;
  return log.findIndex((t) => t >= ts);
}

function groupHandlers(w: World): Map<number, FakeHandler> {
  return new Map<number, FakeHandler>([
    [ListGroupsApi.key, (h, r) => {
      ListGroupsApi.decodeRequest(h.apiVersion, r);
      return respond(ListGroupsApi, h.apiVersion, h.correlationId, {
        throttleTimeMs: 0, errorCode: 0,
        groups: [
          ...[...w.groups].map(([groupId, g]) => ({ groupId, protocolType: 'consumer', groupState: g.state, groupType: 'classic' })),
          { groupId: 'kip848', protocolType: 'consumer', groupState: 'Stable', groupType: 'consumer' },
        ],
      });
    }],
    [DescribeGroupsApi.key, (h, r) => {
      const req = DescribeGroupsApi.decodeRequest(h.apiVersion, r);
      return respond(DescribeGroupsApi, h.apiVersion, h.correlationId, {
        throttleTimeMs: 0,
        groups: req.groups.map((id) => {
          const g = w.groups.get(id);
          return {
            errorCode: 0, groupId: id, groupState: g?.state ?? 'Dead', protocolType: g === undefined ? '' : 'consumer',
            protocolData: g?.protocol ?? '', authorizedOperations: NO_OPS,
            members: (g?.members ?? []).map((m) => ({
              memberId: m.memberId, groupInstanceId: null, clientId: m.clientId, clientHost: m.host, memberMetadata: Buffer.alloc(0), memberAssignment: m.assignment,
            })),
          };
        }),
      });
    }],
    [ConsumerGroupDescribeApi.key, (h, r) => {
      const req = ConsumerGroupDescribeApi.decodeRequest(h.apiVersion, r);
      return respond(ConsumerGroupDescribeApi, h.apiVersion, h.correlationId, {
        throttleTimeMs: 0,
        groups: req.groupIds.map((id) => ({
          errorCode: id === 'kip848' ? 0 : ErrorCode.GROUP_ID_NOT_FOUND, errorMessage: null, groupId: id,
          groupState: id === 'kip848' ? 'Stable' : '', groupEpoch: 3, assignmentEpoch: 3, assignorName: 'uniform', authorizedOperations: NO_OPS,
          members: id !== 'kip848' ? [] : [{
            memberId: 'm848', instanceId: null, rackId: null, memberEpoch: 3, clientId: 'c848', clientHost: '/10.0.0.1',
            subscribedTopicNames: ['orders'], subscribedTopicRegex: null,
            assignment: { topicPartitions: [{ topicId: 'a'.repeat(32), topicName: 'orders', partitions: [1, 0] }] },
            targetAssignment: { topicPartitions: [] },
          }],
        })),
      });
    }],
    [OffsetFetchApi.key, (h, r) => {
      const req = OffsetFetchApi.decodeRequest(h.apiVersion, r);
      const topicsOf = (id: string): { name: string; partitions: { partitionIndex: number; committedOffset: number; committedLeaderEpoch: number; metadata: string; errorCode: number }[] }[] => {
        const byTopic = new Map<string, { partitionIndex: number; committedOffset: number; committedLeaderEpoch: number; metadata: string; errorCode: number }[]>();
        for (const [k, offset] of w.groups.get(id)?.offsets ?? []) {
          const [name, p] = k.split('/') as [string, string];
          byTopic.set(name, [...(byTopic.get(name) ?? []), { partitionIndex: Number(p), committedOffset: offset, committedLeaderEpoch: -1, metadata: '', errorCode: 0 }]);
        }
        return [...byTopic].map(([name, partitions]) => ({ name, partitions }));
      };
      return respond(OffsetFetchApi, h.apiVersion, h.correlationId, {
        throttleTimeMs: 0, errorCode: 0, topics: h.apiVersion < 8 ? topicsOf(req.groupId) : [],
        groups: req.groups.map((g) => ({ groupId: g.groupId, errorCode: 0, topics: topicsOf(g.groupId) })),
      });
    }],
    [OffsetCommitApi.key, (h, r) => {
      const req = OffsetCommitApi.decodeRequest(h.apiVersion, r);
      const g = w.groups.get(req.groupId) ?? { state: 'Empty', protocol: '', members: [], offsets: new Map<string, number>() };
      const refused = g.members.length > 0 && req.generationIdOrMemberEpoch === -1;
      if (!refused) {
        w.groups.set(req.groupId, g);
        for (const t of req.topics) for (const p of t.partitions) g.offsets.set(key(t.name, p.partitionIndex), p.committedOffset);
      }
      return respond(OffsetCommitApi, h.apiVersion, h.correlationId, {
        throttleTimeMs: 0,
        topics: req.topics.map((t) => ({
          name: t.name, partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode: refused ? ErrorCode.UNKNOWN_MEMBER_ID : 0 })),
        })),
      });
    }],
    [ListOffsetsApi.key, (h, r) => {
      const req = ListOffsetsApi.decodeRequest(h.apiVersion, r);
      return respond(ListOffsetsApi, h.apiVersion, h.correlationId, {
        throttleTimeMs: 0,
        topics: req.topics.map((t) => ({
          name: t.name,
          partitions: t.partitions.map((p) => {
            const log = w.topics.get(t.name)?.[p.partitionIndex];
            if (log === undefined) return { partitionIndex: p.partitionIndex, errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, timestamp: -1, offset: -1, leaderEpoch: -1 };
            const offset = listOffset(log, p.timestamp);
            return { partitionIndex: p.partitionIndex, errorCode: 0, timestamp: p.timestamp >= 0 && offset >= 0 ? log[offset] as number : -1, offset, leaderEpoch: 0 };
          }),
        })),
      });
    }],
    [FetchApi.key, (h, r) => {
      const req = FetchApi.decodeRequest(h.apiVersion, r);
      return respond(FetchApi, h.apiVersion, h.correlationId, {
        throttleTimeMs: 0, errorCode: 0, sessionId: 0, nodeEndpoints: [],
        responses: req.topics.map((t) => ({
          topic: t.topic, topicId: t.topicId,
          partitions: t.partitions.map((p) => {
            const log = w.topics.get(t.topic)?.[p.partition] ?? [];
            const inRange = p.fetchOffset >= 0 && p.fetchOffset < log.length;
            return {
              partitionIndex: p.partition, errorCode: p.fetchOffset > log.length ? ErrorCode.OFFSET_OUT_OF_RANGE : 0,
              highWatermark: log.length, lastStableOffset: log.length, logStartOffset: 0,
              divergingEpoch: { epoch: -1, endOffset: -1 }, currentLeader: NO_LEADER, snapshotId: { endOffset: -1, epoch: -1 },
              abortedTransactions: null, preferredReadReplica: -1, records: inRange ? batchAt(log, p.fetchOffset) : Buffer.alloc(0),
            };
          }),
        })),
      });
    }],
    [DeleteGroupsApi.key, (h, r) => {
      const req = DeleteGroupsApi.decodeRequest(h.apiVersion, r);
      return respond(DeleteGroupsApi, h.apiVersion, h.correlationId, {
        throttleTimeMs: 0,
        results: req.groupsNames.map((groupId) => {
          const g = w.groups.get(groupId);
          const errorCode = g === undefined ? ErrorCode.GROUP_ID_NOT_FOUND : g.members.length > 0 ? ErrorCode.NON_EMPTY_GROUP : 0;
          if (errorCode === 0) w.groups.delete(groupId);
          return { groupId, errorCode };
        }),
      });
    }],
    [MetadataApi.key, (h, r) => {
      const req = MetadataApi.decodeRequest(h.apiVersion, r);
      return respond(MetadataApi, h.apiVersion, h.correlationId, {
        throttleTimeMs: 0, brokers: [{ nodeId: 0, host: '127.0.0.1', port: 9092, rack: null }], clusterId: 'c', controllerId: 0, clusterAuthorizedOperations: NO_OPS,
        topics: (req.topics ?? []).map((t) => {
          const logs = w.topics.get(t.name ?? '');
          return {
            errorCode: logs === undefined ? ErrorCode.UNKNOWN_TOPIC_OR_PARTITION : 0, name: t.name, topicId: 'a'.repeat(32), isInternal: false, topicAuthorizedOperations: NO_OPS,
            partitions: (logs ?? []).map((_, i) => ({ errorCode: 0, partitionIndex: i, leaderId: 0, leaderEpoch: 0, replicaNodes: [0], isrNodes: [0], offlineReplicas: [] })),
          };
        }),
      });
    }],
    [DescribeConfigsApi.key, (h, r) => {
      const req = DescribeConfigsApi.decodeRequest(h.apiVersion, r);
      return respond(DescribeConfigsApi, h.apiVersion, h.correlationId, {
        throttleTimeMs: 0,
        results: req.resources.map((res) => ({ errorCode: 0, errorMessage: null, resourceType: res.resourceType, resourceName: res.resourceName, configs: [] })),
      });
    }],
  ]);
}

const assign = (topic: string, partitions: number[]): Buffer => encodeAssignment({ assignedPartitions: [{ topic, partitions }], userData: null });

/**
 * orders: p0 has 10 records one second apart, p1 4 records, p2 6 records; audit: p0 has
 * timestamps that go backwards. Group 'app' (Empty) committed orders-0 at 3 and orders-1 at 4
 * and audit-0 at 0; 'live' has a member owning orders-0/2 and one still rebalancing.
 */
function world(): World {
  const seconds = (n: number): number[] => Array.from({ length: n }, (_, i) => T0 + i * 1000);
  return {
    topics: new Map([['orders', [seconds(10), seconds(4), seconds(6)]], ['audit', [[T0 + 9000, T0 + 5000, T0 + 1000]]]]),
    groups: new Map<string, FakeGroup>([
      ['app', { state: 'Empty', protocol: '', members: [], offsets: new Map([[key('orders', 0), 3], [key('orders', 1), 4], [key('audit', 0), 0]]) }],
      ['live', {
        state: 'Stable', protocol: 'range', offsets: new Map([[key('orders', 0), 9]]),
        members: [
          { memberId: 'm-1', clientId: 'c1', host: '/127.0.0.1', assignment: assign('orders', [2, 0]) },
          { memberId: 'm-2', clientId: 'c2', host: '/127.0.0.2', assignment: Buffer.alloc(0) },
        ],
      }],
    ]),
  };
}

const cli = cliInProcess;

async function withBroker(fn: (brokers: string[], w: World, fake: FakeBroker) => Promise<void>): Promise<void> {
  const w = world();
  const fake = await FakeBroker.start({ handlers: groupHandlers(w) });
  try {
    await fn(['--brokers', `127.0.0.1:${fake.port}`], w, fake);
  } finally {
    await fake.stop();
  }
}

const requestsOf = (fake: FakeBroker, apiKey: number): number => fake.seen.filter((h) => h.apiKey === apiKey).length;

test('group list shows classic and KIP-848 groups with member counts, one describe request per kind', async () => {
  await withBroker(async (brokers, _w, fake) => {
    let r = await cli(['group', 'list', ...brokers, '--format', 'json']);
    assert.equal(r.code, 0, r.err);
    assert.deepEqual(JSON.parse(r.out), [
      { groupId: 'app', state: 'Empty', protocolType: 'consumer', groupType: 'classic', members: 0 },
      { groupId: 'kip848', state: 'Stable', protocolType: 'consumer', groupType: 'consumer', members: 1 },
      { groupId: 'live', state: 'Stable', protocolType: 'consumer', groupType: 'classic', members: 2 },
    ]);
    assert.equal(requestsOf(fake, DescribeGroupsApi.key), 1);
    assert.equal(requestsOf(fake, ConsumerGroupDescribeApi.key), 1);
    r = await cli(['group', 'list', ...brokers]);
    assert.deepEqual(r.out.split('\n').map((l) => l.split(/\s+/)), [
      ['GROUP', 'STATE', 'TYPE', 'PROTOCOL-TYPE', 'MEMBERS'],
      ['app', 'Empty', 'classic', 'consumer', '0'],
      ['kip848', 'Stable', 'consumer', 'consumer', '1'],
      ['live', 'Stable', 'classic', 'consumer', '2'],
    ]);
  });
});

test('group describe reports committed offsets, log ends and lag in records and seconds', async () => {
  await withBroker(async (brokers) => {
    const r = await cli(['group', 'describe', 'app', ...brokers, '--format', 'json']);
    assert.equal(r.code, 0, r.err);
    const d = JSON.parse(r.out) as { state: string; members: unknown[]; partitions: unknown[] };
    assert.equal(d.state, 'Empty');
    assert.deepEqual(d.members, []);
    assert.deepEqual(d.partitions, [
      // The committed record's CreateTime is after the last one's: never a negative time.
      { topic: 'audit', partition: 0, committedOffset: 0, logEndOffset: 3, lag: 3, lagSeconds: 0, memberId: null },
      // Offset 3 (T0+3s) sits inside the batch that starts at 0; the last record is at T0+9s.
      { topic: 'orders', partition: 0, committedOffset: 3, logEndOffset: 10, lag: 7, lagSeconds: 6, memberId: null },
      { topic: 'orders', partition: 1, committedOffset: 4, logEndOffset: 4, lag: 0, lagSeconds: 0, memberId: null },
    ]);
  });
});

test('group describe shows members, their assignment and each partition\'s owner', async () => {
  await withBroker(async (brokers) => {
    let r = await cli(['group', 'describe', 'live', ...brokers, '--format', 'json']);
    assert.equal(r.code, 0, r.err);
    const d = JSON.parse(r.out) as { protocol: string; members: { memberId: string; assignment: unknown }[]; partitions: unknown[] };
    assert.equal(d.protocol, 'range');
    assert.deepEqual(d.members.map((m) => [m.memberId, m.assignment]), [['m-1', [{ topic: 'orders', partitions: [0, 2] }]], ['m-2', []]]);
    assert.deepEqual(d.partitions, [
      { topic: 'orders', partition: 0, committedOffset: 9, logEndOffset: 10, lag: 1, lagSeconds: 0, memberId: 'm-1' },
      { topic: 'orders', partition: 2, committedOffset: null, logEndOffset: 6, lag: null, lagSeconds: null, memberId: 'm-1' },
    ]);

    r = await cli(['group', 'describe', 'live', ...brokers]);
    assert.match(r.out, /^state\s+Stable$/m);
    assert.match(r.out, /^protocol\s+range$/m);
    assert.match(r.out, /^m-1\s+-\s+c1\s+\/127\.0\.0\.1\s+orders:\[0,2\]$/m);
    assert.match(r.out, /^m-2\s+-\s+c2\s+\/127\.0\.0\.2\s+\(none\)$/m);
    assert.match(r.out, /^TOPIC\s+PARTITION\s+COMMITTED\s+LOG-END\s+LAG\s+LAG-SECONDS\s+MEMBER$/m);
    assert.match(r.out, /^orders\s+2\s+-\s+6\s+-\s+-\s+m-1$/m);
  });
});

test('group describe falls back to ConsumerGroupDescribe for KIP-848 groups; unknown groups fail', async () => {
  await withBroker(async (brokers) => {
    let r = await cli(['group', 'describe', 'kip848', ...brokers, '--format', 'json']);
    assert.equal(r.code, 0, r.err);
    const d = JSON.parse(r.out) as { groupType: string; protocol: string; members: { clientHost: string; assignment: unknown }[]; partitions: { partition: number; memberId: string }[] };
    assert.equal(d.groupType, 'consumer');
    assert.equal(d.protocol, 'uniform');
    assert.deepEqual(d.members[0]?.assignment, [{ topic: 'orders', partitions: [0, 1] }]);
    assert.deepEqual(d.partitions.map((p) => [p.partition, p.memberId]), [[0, 'm848'], [1, 'm848']]);

    r = await cli(['group', 'describe', 'nope', ...brokers]);
    assert.equal(r.code, 1);
    assert.equal(r.err, 'sluice: GROUP_ID_NOT_FOUND: group nope does not exist; `sluice group list` shows the groups');
  });
});

test('a member assignment that is not the consumer protocol\'s is shown as unknown', async () => {
  await withBroker(async (brokers, w) => {
    const live = w.groups.get('live') as FakeGroup;
    (live.members[0] as FakeMember).assignment = Buffer.from([0, 0, 0, 0, 0, 9]); // truncated topics array
    const r = await cli(['group', 'describe', 'live', ...brokers, '--format', 'json']);
    assert.equal(r.code, 0, r.err);
    const d = JSON.parse(r.out) as { members: { assignment: unknown }[]; partitions: { memberId: string | null }[] };
    assert.equal(d.members[0]?.assignment, null);
    assert.deepEqual(d.partitions.map((p) => p.memberId), [null]);
  });
});

test('group seek sets offsets of an inactive group and prints old and new', async () => {
  await withBroker(async (brokers, w) => {
    const app = (w.groups.get('app') as FakeGroup).offsets;
    let r = await cli(['group', 'seek', 'app', '--topic', 'orders', '--to-earliest', ...brokers, '--format', 'json']);
    assert.equal(r.code, 0, r.err);
    assert.deepEqual(JSON.parse(r.out), {
      groupId: 'app', topic: 'orders',
      partitions: [{ partition: 0, oldOffset: 3, newOffset: 0 }, { partition: 1, oldOffset: 4, newOffset: 0 }, { partition: 2, oldOffset: null, newOffset: 0 }],
    });
    assert.deepEqual([app.get(key('orders', 0)), app.get(key('orders', 1)), app.get(key('orders', 2))], [0, 0, 0]);

    r = await cli(['group', 'seek', 'app', '--topic', 'orders', '--partition', '0', '--to-offset', '7', ...brokers]);
    assert.equal(r.code, 0, r.err);
    assert.deepEqual(r.out.split('\n').map((l) => l.split(/\s+/)), [['TOPIC', 'PARTITION', 'OLD', 'NEW'], ['orders', '0', '0', '7']]);
    assert.equal(app.get(key('orders', 1)), 0, 'other partitions untouched');

    r = await cli(['group', 'seek', 'app', '--topic', 'orders', '--partition', '1', '--to-offset', '99', ...brokers]);
    assert.match(r.out, /^orders\s+1\s+0\s+4$/m, 'clamped to the log end');

    r = await cli(['group', 'seek', 'app', '--topic', 'orders', '--to-timestamp', String(T0 + 4500), ...brokers, '--format', 'json']);
    assert.deepEqual((JSON.parse(r.out) as { partitions: { newOffset: number }[] }).partitions.map((p) => p.newOffset), [5, 4, 5]);

    r = await cli(['group', 'seek', 'app', '--topic', 'orders', '--to-latest', ...brokers, '--format', 'json']);
    assert.deepEqual((JSON.parse(r.out) as { partitions: { newOffset: number }[] }).partitions.map((p) => p.newOffset), [10, 4, 6]);

    r = await cli(['group', 'seek', 'fresh', '--topic', 'audit', '--to-earliest', ...brokers]);
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /^audit\s+0\s+-\s+0$/m, 'a group with no offsets yet');
  });
});

test('group seek of a group with members fails with a clear UNKNOWN_MEMBER_ID', async () => {
  await withBroker(async (brokers, w) => {
    const r = await cli(['group', 'seek', 'live', '--topic', 'orders', '--to-earliest', ...brokers]);
    assert.equal(r.code, 1);
    assert.match(r.err, /^sluice: UNKNOWN_MEMBER_ID \(commit offsets of group live\): group live has active members; its offsets can only be set while it has none/);
    assert.equal(w.groups.get('live')?.offsets.get(key('orders', 0)), 9);
    const bad = await cli(['group', 'seek', 'app', '--topic', 'nope', '--to-earliest', ...brokers]);
    assert.equal(bad.code, 1);
    assert.match(bad.err, /UNKNOWN_TOPIC_OR_PARTITION/);
  });
});

test('group delete removes empty groups and names the ones that have members', async () => {
  await withBroker(async (brokers, w) => {
    let r = await cli(['group', 'delete', 'app', ...brokers]);
    assert.equal(r.code, 0, r.err);
    assert.equal(r.out, 'deleted group app');
    assert.ok(!w.groups.has('app'));

    w.groups.set('idle', { state: 'Empty', protocol: '', members: [], offsets: new Map() });
    r = await cli(['group', 'delete', 'live', 'idle', 'ghost', ...brokers]);
    assert.equal(r.code, 1);
    assert.equal(r.err, 'sluice: NON_EMPTY_GROUP (delete groups): group live still has active members; stop its consumers first; group ghost does not exist (deleted: idle)');
    assert.ok(w.groups.has('live') && !w.groups.has('idle'));

    w.groups.set('a', { state: 'Empty', protocol: '', members: [], offsets: new Map() });
    w.groups.set('b', { state: 'Empty', protocol: '', members: [], offsets: new Map() });
    r = await cli(['group', 'delete', 'a', 'b', ...brokers, '--format', 'json']);
    assert.deepEqual(JSON.parse(r.out), { deleted: ['a', 'b'] });
  });
});

test('usage errors exit 2 before any network traffic', async () => {
  for (const argv of [
    ['group', 'describe'],
    ['group', 'describe', 'a', 'b'],
    ['group', 'list', 'x'],
    ['group', 'delete'],
    ['group', 'seek', 'g', '--to-earliest'],
    ['group', 'seek', 'g', '--topic', 't'],
    ['group', 'seek', 'g', '--topic', 't', '--to-earliest', '--to-latest'],
    ['group', 'seek', 'g', '--topic', 't', '--to-offset', '-1'],
    ['group', 'seek', 'g', '--topic', 't', '--to-offset', 'x'],
    ['group', 'seek', 'g', '--topic', 't', '--to-timestamp', '1.5'],
    ['group', 'seek', 'g', '--topic', 't', '--to-latest', '--partition', '-1'],
    ['group', 'seek', 'g', '--topic', 't', '--to-latest=yes'],
    ['group', 'list', '--format', 'xml'],
    ['group', 'list', '--to-earliest'],
    ['group', 'frobnicate'],
  ]) {
    const r = await cli([...argv, '--brokers', '127.0.0.1:1']);
    assert.equal(r.code, 2, `${argv.join(' ')}: ${r.err}`);
    assert.doesNotMatch(r.err, /no broker at/);
  }
  const r = await cli(['group', 'list', '--brokers', '127.0.0.1:1']);
  assert.equal(r.code, 1);
  assert.match(r.err, /no broker at 127\.0\.0\.1:1: is `sluice start` running\?/);
});

test('group help exits 0 and documents the JSON output', async () => {
  for (const argv of [['group'], ['group', '--help'], ['group', 'seek', '--help'], ['group', 'describe', '-h'], ['--help']]) {
    const r = await cli(argv);
    assert.equal(r.code, 0, argv.join(' '));
    assert.match(r.out, /^Usage: sluice/);
    assert.match(r.out, /group/);
  }
  const r = await cli(['group', '--help']);
  assert.match(r.out, /"lagSeconds"/);
  assert.match(r.out, /"oldOffset", "newOffset"/);
});

test('seek targets: offsets clamp into the log, a timestamp past the end means the end', () => {
  const b = { earliest: 5, latest: 20, atTimestamp: 12 };
  const cases: [SeekTarget, number][] = [
    [{ kind: 'earliest' }, 5], [{ kind: 'latest' }, 20],
    [{ kind: 'offset', offset: 0 }, 5], [{ kind: 'offset', offset: 9 }, 9], [{ kind: 'offset', offset: 21 }, 20],
    [{ kind: 'timestamp', timestamp: 1 }, 12],
  ];
  for (const [target, want] of cases) assert.equal(seekOffset(target, b), want, JSON.stringify(target));
  assert.equal(seekOffset({ kind: 'timestamp', timestamp: 1 }, { ...b, atTimestamp: -1 }), 20);
});
