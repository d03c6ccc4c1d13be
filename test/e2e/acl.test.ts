// ACLs against a real broker process with a PLAINTEXT and a SASL_PLAINTEXT listener (so
// allow.everyone.if.no.acl.found defaults to false) and super user User:admin. A table-driven test
// calls every API the broker serves as User:ANONYMOUS (the plaintext listener) without the ACL it
// needs (a follower's Fetch and OffsetForLeaderEpoch: CLUSTER_ACTION on the cluster) and checks
// the exact error code, then with ACLs granted checks none is refused for
// authorisation. kcat and kafkajs (SASL PLAIN): an unauthorised user can neither produce, consume
// nor see topic names; an authorised one can; DENY beats ALLOW; prefixed patterns; the ACLs, made
// through kafkajs's admin (CreateAcls) and `sluice acl`, survive a broker restart.
import { after, afterEach, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Admin, ITopicConfig, SASLOptions } from 'kafkajs';
import { KafkaConnection } from '../../src/client/connection.js';
import { AclOperation, AclPermission, PatternType, ResourceType } from '../../src/coordinator/acl/acl.js';
import { apiByKey } from '../../src/protocol/apis/index.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import type { AnyApi } from '../../src/protocol/schema.js';
import { BrokerProcess, freePort } from '../helpers/broker_process.js';
import { run } from '../helpers/child.js';
import { sluice } from '../helpers/cli_run.js';
import { KCAT } from '../helpers/kcat.js';
import { Kafka, logLevel } from '../helpers/kafkajs_client.js';

const HOST = '127.0.0.1';
const USERS = { admin: 'admin-pw', alice: 'alice-pw', bob: 'bob-pw' } as const;

let work: string;
let broker: BrokerProcess;
let saslPort: number;

function kafka(user: keyof typeof USERS): InstanceType<typeof Kafka> {
  return new Kafka({
    clientId: `acl-${user}`, brokers: [`${HOST}:${saslPort}`], logLevel: logLevel.NOTHING,
    sasl: { mechanism: 'plain', username: user, password: USERS[user] } as SASLOptions, retry: { retries: 1, initialRetryTime: 100 },
  });
}

async function asAdmin<T>(fn: (admin: Admin) => Promise<T>): Promise<T> {
  const admin = kafka('admin').admin();
  await admin.connect();
  try {
    return await fn(admin);
  } finally {
    await admin.disconnect();
  }
}

type Grant = { resourceType: number; resourceName: string; resourcePatternType?: number; principal: string; operation: number; permissionType?: number };

function grant(acls: readonly Grant[]): Promise<void> {
  return asAdmin(async (admin) => {
    await admin.createAcls({
      acl: acls.map((a) => ({
        resourcePatternType: PatternType.LITERAL, permissionType: AclPermission.ALLOW, host: '*', ...a,
      })) as Parameters<Admin['createAcls']>[0]['acl'],
    });
  });
}

function kcatArgs(user: keyof typeof USERS): string[] {
  return ['-b', `${HOST}:${saslPort}`, '-X', 'security.protocol=SASL_PLAINTEXT', '-X', 'sasl.mechanisms=PLAIN', '-X', `sasl.username=${user}`, '-X', `sasl.password=${USERS[user]}`];
}

before(async () => {
  work = mkdtempSync(join(tmpdir(), 'sluice-acl-'));
  const users = join(work, 'users');
  writeFileSync(users, Object.entries(USERS).map(([u, p]) => `${u}:${p}`).join('\n'));
  saslPort = await freePort();
  broker = await BrokerProcess.start({
    shards: 1,
    listeners: [`SASL_PLAINTEXT://${HOST}:${saslPort}`],
    args: ['--sasl-enabled-mechanisms', 'PLAIN', '--sasl-plain-users-file', users, '--super-users', 'User:admin'],
  });
  await asAdmin(async (admin) => {
    const topics: ITopicConfig[] = ['secret', 'pay-orders', 'pay-refunds', 'anon-t', 'other'].map((topic) => ({ topic, numPartitions: 1, replicationFactor: 1 }));
    await admin.createTopics({ topics, waitForLeaders: true });
  });
});
afterEach((t) => broker?.noteResult(t));
after(async () => {
  await broker?.dispose();
  if (work !== undefined) rmSync(work, { recursive: true, force: true });
});

/** One request per API the broker serves, on topic anon-t, group anon-g, and where its error code is. */
interface Row {
  readonly api: string;
  readonly body: Record<string, unknown>;
  /** Default: the newest the broker serves. */
  readonly version?: number;
  readonly denied: number;
  readonly code: (res: Record<string, any>) => number; // eslint-disable-line @typescript-eslint/no-explicit-any
}

const T = 'anon-t';
const G = 'anon-g';
const TOPIC_DENIED = ErrorCode.TOPIC_AUTHORIZATION_FAILED;
const GROUP_DENIED = ErrorCode.GROUP_AUTHORIZATION_FAILED;
const CLUSTER_DENIED = ErrorCode.CLUSTER_AUTHORIZATION_FAILED;
const ALL_ACLS = { resourceTypeFilter: ResourceType.ANY, resourceNameFilter: null, patternTypeFilter: PatternType.ANY, principalFilter: 'User:nobody', hostFilter: null, operation: AclOperation.ANY, permissionType: AclPermission.ANY };

const TABLE: readonly Row[] = [
  { api: 'Metadata', body: { topics: [{ name: T, topicId: '0'.repeat(32) }], allowAutoTopicCreation: false }, denied: TOPIC_DENIED, code: (r) => r.topics[0].errorCode },
  { api: 'Produce', body: { acks: 1, timeoutMs: 5000, transactionalId: null, topicData: [{ name: T, partitionData: [{ index: 0, records: Buffer.from('not a batch') }] }] }, denied: TOPIC_DENIED, code: (r) => r.responses[0].partitionResponses[0].errorCode },
  { api: 'Fetch', body: { replicaId: -1, maxWaitMs: 0, minBytes: 0, maxBytes: 1024, isolationLevel: 0, topics: [{ topic: T, partitions: [{ partition: 0, fetchOffset: 0, partitionMaxBytes: 1024, currentLeaderEpoch: -1, lastFetchedEpoch: -1, logStartOffset: -1 }] }], forgottenTopicsData: [], rackId: '' }, version: 12, denied: TOPIC_DENIED, code: (r) => r.responses[0].partitions[0].errorCode },
  // A follower's fetch (a replica id) needs CLUSTER_ACTION on the cluster; Kafka answers it per partition.
  { api: 'Fetch', body: { replicaId: 1, maxWaitMs: 0, minBytes: 0, maxBytes: 1024, isolationLevel: 0, topics: [{ topic: T, partitions: [{ partition: 0, fetchOffset: 0, partitionMaxBytes: 1024, currentLeaderEpoch: -1, lastFetchedEpoch: -1, logStartOffset: -1 }] }], forgottenTopicsData: [], rackId: '' }, version: 12, denied: TOPIC_DENIED, code: (r) => r.responses[0].partitions[0].errorCode },
  { api: 'Fetch', body: { replicaId: -1, replicaState: { replicaId: 1, replicaEpoch: 1 }, clusterId: null, maxWaitMs: 0, minBytes: 0, maxBytes: 1024, isolationLevel: 0, sessionId: 0, sessionEpoch: -1, topics: [{ topic: '', topicId: '0'.repeat(32), partitions: [{ partition: 0, fetchOffset: 0, partitionMaxBytes: 1024, currentLeaderEpoch: -1, lastFetchedEpoch: -1, logStartOffset: -1, replicaDirectoryId: '0'.repeat(32) }] }], forgottenTopicsData: [], rackId: '' }, denied: TOPIC_DENIED, code: (r) => r.responses[0].partitions[0].errorCode },
  { api: 'ListOffsets', body: { replicaId: -1, isolationLevel: 0, topics: [{ name: T, partitions: [{ partitionIndex: 0, currentLeaderEpoch: -1, timestamp: -1 }] }] }, denied: TOPIC_DENIED, code: (r) => r.topics[0].partitions[0].errorCode },
  { api: 'OffsetForLeaderEpoch', body: { replicaId: -1, topics: [{ topic: T, partitions: [{ partition: 0, currentLeaderEpoch: -1, leaderEpoch: 0 }] }] }, denied: TOPIC_DENIED, code: (r) => r.topics[0].partitions[0].errorCode },
  { api: 'OffsetForLeaderEpoch', body: { replicaId: 1, topics: [{ topic: T, partitions: [{ partition: 0, currentLeaderEpoch: -1, leaderEpoch: 0 }] }] }, denied: CLUSTER_DENIED, code: (r) => r.topics[0].partitions[0].errorCode },
  { api: 'CreateTopics', body: { topics: [{ name: 'anon-new', numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 10_000, validateOnly: true }, denied: TOPIC_DENIED, code: (r) => r.topics[0].errorCode },
  { api: 'CreatePartitions', body: { topics: [{ name: T, count: 1, assignments: null }], timeoutMs: 10_000, validateOnly: true }, denied: TOPIC_DENIED, code: (r) => r.results[0].errorCode },
  { api: 'DescribeConfigs', body: { resources: [{ resourceType: 2, resourceName: T, configurationKeys: null }] }, denied: TOPIC_DENIED, code: (r) => r.results[0].errorCode },
  { api: 'DescribeConfigs', body: { resources: [{ resourceType: 4, resourceName: '0', configurationKeys: null }] }, denied: CLUSTER_DENIED, code: (r) => r.results[0].errorCode },
  { api: 'IncrementalAlterConfigs', body: { resources: [{ resourceType: 2, resourceName: T, configs: [{ name: 'retention.ms', configOperation: 0, value: '3600000' }] }], validateOnly: true }, denied: TOPIC_DENIED, code: (r) => r.responses[0].errorCode },
  { api: 'AlterConfigs', body: { resources: [{ resourceType: 4, resourceName: '', configs: [] }], validateOnly: true }, denied: CLUSTER_DENIED, code: (r) => r.responses[0].errorCode },
  { api: 'InitProducerId', body: { transactionalId: null, transactionTimeoutMs: 60_000, producerId: -1, producerEpoch: -1 }, denied: CLUSTER_DENIED, code: (r) => r.errorCode },
  { api: 'FindCoordinator', body: { key: G, keyType: 0, coordinatorKeys: [G] }, denied: GROUP_DENIED, code: (r) => r.coordinators[0].errorCode },
  { api: 'JoinGroup', body: { groupId: G, sessionTimeoutMs: 10_000, rebalanceTimeoutMs: 10_000, memberId: '', groupInstanceId: null, protocolType: 'consumer', protocols: [{ name: 'range', metadata: Buffer.alloc(0) }], reason: null }, denied: GROUP_DENIED, code: (r) => r.errorCode },
  { api: 'SyncGroup', body: { groupId: G, generationId: 1, memberId: 'm', groupInstanceId: null, protocolType: 'consumer', protocolName: 'range', assignments: [] }, denied: GROUP_DENIED, code: (r) => r.errorCode },
  { api: 'Heartbeat', body: { groupId: G, generationId: 1, memberId: 'm', groupInstanceId: null }, denied: GROUP_DENIED, code: (r) => r.errorCode },
  { api: 'LeaveGroup', body: { groupId: G, memberId: 'm', members: [{ memberId: 'm', groupInstanceId: null, reason: null }] }, denied: GROUP_DENIED, code: (r) => r.errorCode },
  { api: 'OffsetCommit', body: { groupId: G, generationIdOrMemberEpoch: -1, memberId: '', groupInstanceId: null, retentionTimeMs: -1, topics: [{ name: T, partitions: [{ partitionIndex: 0, committedOffset: 0, committedLeaderEpoch: -1, commitTimestamp: -1, committedMetadata: null }] }] }, denied: GROUP_DENIED, code: (r) => r.topics[0].partitions[0].errorCode },
  { api: 'OffsetFetch', body: { groupId: G, topics: null, requireStable: false, groups: [{ groupId: G, memberId: null, memberEpoch: -1, topics: null }] }, denied: GROUP_DENIED, code: (r) => r.groups[0].errorCode },
  { api: 'DescribeGroups', body: { groups: [G], includeAuthorizedOperations: false }, denied: GROUP_DENIED, code: (r) => r.groups[0].errorCode },
  { api: 'DeleteGroups', body: { groupsNames: [G] }, denied: GROUP_DENIED, code: (r) => r.results[0].errorCode },
  { api: 'OffsetDelete', body: { groupId: G, topics: [{ name: T, partitions: [{ partitionIndex: 0 }] }] }, denied: GROUP_DENIED, code: (r) => r.errorCode },
  { api: 'ConsumerGroupHeartbeat', body: { groupId: G, memberId: '', memberEpoch: 0, instanceId: null, rackId: null, rebalanceTimeoutMs: 10_000, subscribedTopicNames: [T], subscribedTopicRegex: null, serverAssignor: null, topicPartitions: [] }, denied: GROUP_DENIED, code: (r) => r.errorCode },
  { api: 'ConsumerGroupDescribe', body: { groupIds: [G], includeAuthorizedOperations: false }, denied: GROUP_DENIED, code: (r) => r.groups[0].errorCode },
  { api: 'DescribeLogDirs', body: { topics: null }, denied: CLUSTER_DENIED, code: (r) => r.errorCode },
  { api: 'ElectLeaders', body: { electionType: 0, topicPartitions: [{ topic: T, partitionId: [0] }], timeoutMs: 5000 }, denied: CLUSTER_DENIED, code: (r) => r.errorCode },
  { api: 'AlterPartitionReassignments', body: { timeoutMs: 5000, topics: [{ name: T, partitions: [{ partitionIndex: 0, replicas: null }] }] }, denied: CLUSTER_DENIED, code: (r) => r.errorCode },
  { api: 'ListPartitionReassignments', body: { timeoutMs: 5000, topics: null }, denied: CLUSTER_DENIED, code: (r) => r.errorCode },
  { api: 'DescribeQuorum', body: { topics: [{ topicName: '__cluster_metadata', partitions: [{ partitionIndex: 0 }] }] }, denied: CLUSTER_DENIED, code: (r) => r.errorCode },
  { api: 'UnregisterBroker', body: { brokerId: 99 }, denied: CLUSTER_DENIED, code: (r) => r.errorCode },
  { api: 'DescribeUserScramCredentials', body: { users: null }, denied: CLUSTER_DENIED, code: (r) => r.errorCode },
  { api: 'AlterUserScramCredentials', body: { deletions: [{ name: 'nobody', mechanism: 1 }], upsertions: [] }, denied: CLUSTER_DENIED, code: (r) => r.results[0].errorCode },
  { api: 'DescribeAcls', body: ALL_ACLS, denied: CLUSTER_DENIED, code: (r) => r.errorCode },
  { api: 'CreateAcls', body: { creations: [{ resourceType: ResourceType.TOPIC, resourceName: 'x', resourcePatternType: PatternType.LITERAL, principal: 'User:nobody', host: '*', operation: AclOperation.READ, permissionType: AclPermission.ALLOW }] }, denied: CLUSTER_DENIED, code: (r) => r.results[0].errorCode },
  { api: 'DeleteAcls', body: { filters: [ALL_ACLS] }, denied: CLUSTER_DENIED, code: (r) => r.filterResults[0].errorCode },
  { api: 'DescribeClientQuotas', body: { components: [], strict: false }, denied: CLUSTER_DENIED, code: (r) => r.errorCode },
  { api: 'AlterClientQuotas', body: { entries: [{ entity: [{ entityType: 'user', entityName: 'nobody' }], ops: [{ key: 'producer_byte_rate', value: 1024, remove: false }] }], validateOnly: true }, denied: CLUSTER_DENIED, code: (r) => r.entries[0].errorCode },
  // Last: with the ACLs granted it deletes the topic.
  { api: 'DeleteTopics', body: { topicNames: [T], topics: [{ name: T, topicId: '0'.repeat(32) }], timeoutMs: 10_000 }, denied: TOPIC_DENIED, code: (r) => r.responses[0].errorCode },
];

const AUTH_FAILURES: readonly number[] = [TOPIC_DENIED, GROUP_DENIED, CLUSTER_DENIED];

async function callEach(): Promise<Array<{ api: string; code: number }>> {
  const conn = await KafkaConnection.connect({ host: HOST, port: broker.kafkaPort });
  try {
    const byName = new Map([...apiByKey.values()].map((a) => [a.name, a]));
    const out: Array<{ api: string; code: number }> = [];
    for (const row of TABLE) {
      const api = byName.get(row.api) as AnyApi | undefined;
      assert.ok(api !== undefined, `${row.api} is registered`);
      const res = await conn.request(api, row.body as unknown, row.version) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
      out.push({ api: row.api, code: row.code(res) });
    }
    return out;
  } finally {
    conn.close();
  }
}

describe('every API checks its ACLs', () => {
  it('answers each API without its ACL with the exact error code, and with ACLs no authorisation failure', async () => {
    const denied = await callEach();
    assert.deepEqual(denied, TABLE.map((r) => ({ api: r.api, code: r.denied })));
    // ListGroups does not fail: it lists only groups the principal may describe.
    const conn = await KafkaConnection.connect({ host: HOST, port: broker.kafkaPort });
    const listed = await conn.request(apiByKey.get(16)!, { statesFilter: [], typesFilter: [] } as unknown) as { errorCode: number; groups: unknown[] };
    conn.close();
    assert.equal(listed.errorCode, ErrorCode.NONE);

    const anonymous = 'User:ANONYMOUS';
    await grant([
      { resourceType: ResourceType.TOPIC, resourceName: 'anon-', resourcePatternType: PatternType.PREFIXED, principal: anonymous, operation: AclOperation.ALL },
      { resourceType: ResourceType.GROUP, resourceName: G, principal: anonymous, operation: AclOperation.ALL },
      { resourceType: ResourceType.CLUSTER, resourceName: 'kafka-cluster', principal: anonymous, operation: AclOperation.ALL },
    ]);
    const allowed = await callEach();
    for (const r of allowed) assert.ok(!AUTH_FAILURES.includes(r.code), `${r.api} still refused with ${r.code} after the grant`);
    assert.equal(allowed.find((r) => r.api === 'DeleteTopics')?.code, ErrorCode.NONE);
  });
});

describe('real clients', () => {
  it('kcat: an unauthorised user neither produces, consumes nor sees topic names; an authorised one does', async () => {
    const listing = await run(KCAT, [...kcatArgs('alice'), '-L', '-m', '5'], { timeoutMs: 30_000 });
    assert.equal(listing.code, 0, listing.stderr);
    assert.doesNotMatch(listing.stdout.toString(), /topic "/, 'no topic names for a user without ACLs');
    const produced = await run(KCAT, [...kcatArgs('alice'), '-t', 'secret', '-P', '-m', '5'], { timeoutMs: 30_000, input: Buffer.from('nope\n') });
    assert.notEqual(produced.code, 0);
    assert.match(produced.stderr, /Topic authorization failed|TOPIC_AUTHORIZATION_FAILED|not authorized/i);
    const consumed = await run(KCAT, [...kcatArgs('alice'), '-t', 'secret', '-C', '-e', '-o', 'beginning', '-m', '5'], { timeoutMs: 30_000 });
    assert.notEqual(consumed.code, 0);

    const r = await sluice(['acl', 'add', '--brokers', `${HOST}:${saslPort}`, '--allow-principal', 'User:alice', '--operation', 'write', '--operation', 'read', '--topic', 'secret']);
    assert.notEqual(r.code, 0, 'the CLI speaks plaintext only: on the SASL port it cannot manage ACLs');
    await grant(['WRITE', 'READ'].map((op) => ({ resourceType: ResourceType.TOPIC, resourceName: 'secret', principal: 'User:alice', operation: AclOperation[op as 'READ'] })));
    const ok = await run(KCAT, [...kcatArgs('alice'), '-t', 'secret', '-P'], { timeoutMs: 30_000, input: Buffer.from('one\ntwo\n') });
    assert.equal(ok.code, 0, ok.stderr);
    const back = await run(KCAT, [...kcatArgs('alice'), '-t', 'secret', '-C', '-e', '-o', 'beginning', '-q'], { timeoutMs: 30_000 });
    assert.equal(back.code, 0, back.stderr);
    assert.deepEqual(back.stdout.toString().split('\n').filter((l) => l !== ''), ['one', 'two']);
    const seen = await run(KCAT, [...kcatArgs('alice'), '-L'], { timeoutMs: 30_000 });
    const names = [...seen.stdout.toString().matchAll(/topic "([^"]+)"/g)].map((m) => m[1]);
    assert.deepEqual(names, ['secret'], 'only the topic alice may describe');
  });

  it('kafkajs: DENY beats ALLOW and prefixed patterns apply; ACLs survive a broker restart', async () => {
    await grant([
      { resourceType: ResourceType.TOPIC, resourceName: 'pay-', resourcePatternType: PatternType.PREFIXED, principal: 'User:*', operation: AclOperation.WRITE },
      { resourceType: ResourceType.TOPIC, resourceName: 'pay-orders', principal: 'User:bob', operation: AclOperation.WRITE, permissionType: AclPermission.DENY },
    ]);
    const send = async (topic: string): Promise<string> => {
      const producer = kafka('bob').producer({ allowAutoTopicCreation: false, retry: { retries: 0 } });
      await producer.connect();
      try {
        await producer.send({ topic, messages: [{ value: 'v' }] });
        return 'ok';
      } catch (err) {
        return /Topic authorization failed/.test(String(err)) ? 'TOPIC_AUTHORIZATION_FAILED' : String(err);
      } finally {
        await producer.disconnect();
      }
    };
    assert.equal(await send('pay-refunds'), 'ok', 'the prefixed ALLOW covers pay-refunds');
    assert.equal(await send('pay-orders'), 'TOPIC_AUTHORIZATION_FAILED', 'the DENY beats the prefixed ALLOW');
    assert.equal(await send('other'), 'TOPIC_AUTHORIZATION_FAILED', 'no ACL names other');

    const before = await asAdmin((admin) => admin.describeAcls({ resourceType: ResourceType.ANY, resourcePatternType: PatternType.ANY, operation: AclOperation.ANY, permissionType: AclPermission.ANY } as Parameters<Admin['describeAcls']>[0]));
    await broker.stop(30_000);
    await broker.restart();
    const afterRestart = await asAdmin((admin) => admin.describeAcls({ resourceType: ResourceType.ANY, resourcePatternType: PatternType.ANY, operation: AclOperation.ANY, permissionType: AclPermission.ANY } as Parameters<Admin['describeAcls']>[0]));
    const sorted = (x: typeof before): string[] => x.resources.flatMap((r) => r.acls.map((a) => JSON.stringify([r.resourceType, r.resourceName, r.resourcePatternType, a]))).sort();
    assert.deepEqual(sorted(afterRestart), sorted(before));
    assert.ok(sorted(before).length >= 5);
    assert.equal(await send('pay-orders'), 'TOPIC_AUTHORIZATION_FAILED', 'still denied after the restart');
    assert.equal(await send('pay-refunds'), 'ok');
  });

  it('sluice acl add, list and remove as a super user', async () => {
    // The plaintext listener is User:ANONYMOUS, which the first test granted ALL on the cluster.
    const brokers = `${HOST}:${broker.kafkaPort}`;
    const add = await sluice(['acl', 'add', '--brokers', brokers, '--allow-principal', 'User:carol', '--operation', 'read', '--group', 'carol-', '--resource-pattern-type', 'prefixed']);
    assert.equal(add.code, 0, add.stderr);
    const list = await sluice(['acl', 'list', '--brokers', brokers, '--group', 'carol-', '--format', 'json']);
    assert.equal(list.code, 0, list.stderr);
    assert.deepEqual(JSON.parse(list.stdout), [{ resourceType: 'GROUP', resourceName: 'carol-', patternType: 'PREFIXED', principal: 'User:carol', host: '*', operation: 'READ', permission: 'ALLOW' }]);
    const remove = await sluice(['acl', 'remove', '--brokers', brokers, '--group', 'carol-', '--resource-pattern-type', 'prefixed', '--format', 'json']);
    assert.equal(remove.code, 0, remove.stderr);
    assert.equal((JSON.parse(remove.stdout) as unknown[]).length, 1);
    const empty = await sluice(['acl', 'list', '--brokers', brokers, '--group', 'carol-']);
    assert.match(empty.stdout, /no ACLs/);
  });
});
