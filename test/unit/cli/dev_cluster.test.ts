// `sluice dev cluster`'s pure parts: the cluster.json model (ports given once and never twice,
// voters before broker-only nodes, a bounded file, flags the cluster owns refused), each node's
// start argv, argument parsing of the verbs, and a node's place in a DescribeQuorum answer; plus
// status against a fake broker answering DescribeQuorum.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { UsageError } from '../../../src/cli/args.js';
import {
  CLUSTER_FILE, MAX_DEV_NODES, addNodes, bootstrapList, controllerVoters, formatClusterFile, newCluster, nodeDataDir, parseClusterFile, startArgv, withPid,
} from '../../../src/cli/dev_cluster_file.js';
import type { DevCluster } from '../../../src/cli/dev_cluster_file.js';
import { clusterStatus, formatStatus, parseDevCluster, quorumView, saveCluster } from '../../../src/cli/dev_cluster.js';
import { ErrorCode } from '../../../src/protocol/errors.js';
import { DescribeQuorumApi } from '../../../src/protocol/apis/describe_quorum.js';
import type { DescribeQuorumResponsePartition } from '../../../src/protocol/apis/describe_quorum.js';
import { FakeBroker, respond } from '../client/fake_broker.js';

function counter(from = 20000): () => number {
  let next = from;
  return () => next++;
}

test('a new cluster gives each voter three distinct ports and ids 1..N', () => {
  const c = newCluster(3, ['--shards', '1'], counter());
  assert.deepEqual(c.nodes.map((n) => n.id), [1, 2, 3]);
  const ports = c.nodes.flatMap((n) => [n.kafkaPort, n.adminPort, n.controllerPort]);
  assert.equal(new Set(ports).size, 9);
  assert.equal(controllerVoters(c), `1@127.0.0.1:20002,2@127.0.0.1:20005,3@127.0.0.1:20008`);
  assert.equal(bootstrapList(c), '127.0.0.1:20000,127.0.0.1:20003,127.0.0.1:20006');
});

test('start argv names the node, the whole voter set, its listeners, its data dir and the kept flags', () => {
  const c = addNodes(newCluster(2, ['--shards', '1'], counter()), 1, 'observer', counter(30000));
  const observer = c.nodes[2]!;
  assert.equal(observer.id, 3);
  assert.equal(observer.controllerPort, null);
  assert.deepEqual(startArgv(c, '/d', observer), [
    'start', '--node-id', '3', '--controller-voters', '1@127.0.0.1:20002,2@127.0.0.1:20005',
    '--kafka-addr', '127.0.0.1:30000', '--admin-addr', '127.0.0.1:30001', '--data-dir', '/d/node-3/data', '--shards', '1',
  ]);
});

test('cluster.json round-trips, and a broken one is refused with the file named', () => {
  const c = withPid(newCluster(3, [], counter()), 2, 4242);
  assert.deepEqual(parseClusterFile(formatClusterFile(c), 'x'), c);
  const bad: [unknown, RegExp][] = [
    ['{', /x: not JSON/],
    [{ ...c, version: 2 }, /version must be 1/],
    [{ ...c, nodes: [c.nodes[0], c.nodes[0]] }, /node id 1 appears twice/],
    [{ ...c, nodes: [c.nodes[0], { ...c.nodes[1], adminPort: c.nodes[0]!.kafkaPort }] }, /port 20000 is given to two listeners/],
    [{ ...c, nodes: [{ ...c.nodes[0], controllerPort: null }, c.nodes[1]] }, /voter 2 comes after a broker-only node/],
    [{ ...c, nodes: [{ ...c.nodes[0], controllerPort: null }] }, /1 to 32 voters, has 0/],
    [{ ...c, nodes: [{ ...c.nodes[0], kafkaPort: 70000 }] }, /kafkaPort must be a port/],
    [{ ...c, nodes: [{ ...c.nodes[0], pid: -1 }] }, /pid must be a pid or null/],
    [{ ...c, startArgs: ['--node-id', '9'] }, /--node-id is set by the dev cluster/],
  ];
  for (const [content, message] of bad) {
    assert.throws(() => parseClusterFile(typeof content === 'string' ? content : JSON.stringify(content), 'x'), (err: unknown) => err instanceof UsageError && message.test(err.message));
  }
});

test('property: any sequence of adds keeps ids and ports unique, voters first, and the node count bounded', () => {
  fc.assert(fc.property(
    fc.integer({ min: 1, max: 32 }),
    fc.array(fc.integer({ min: 1, max: 20 }), { maxLength: 8 }),
    (voters, adds) => {
      let c: DevCluster = newCluster(voters, [], counter());
      let port = counter(40000);
      for (const k of adds) {
        if (c.nodes.length + k > MAX_DEV_NODES) {
          assert.throws(() => addNodes(c, k, 'observer', port), /at most 64 nodes/);
          continue;
        }
        c = addNodes(c, k, 'observer', port);
        port = counter(40000 + c.nodes.length * 2);
      }
      const text = formatClusterFile(c);
      const back = parseClusterFile(text, 'p');
      assert.equal(new Set(back.nodes.map((n) => n.id)).size, back.nodes.length);
      assert.ok(back.nodes.length <= MAX_DEV_NODES);
      assert.equal(back.nodes.filter((n) => n.controllerPort !== null).length, voters);
    },
  ));
});

test('verb arguments: counts, --dir, --format, start flags only for up, bad input as usage errors', () => {
  assert.deepEqual(parseDevCluster('up', ['5', '--dir', '/x', '--', '--shards', '1']), {
    verb: 'up', dir: '/x', count: 5, timeoutMs: undefined, format: 'text', startArgs: ['--shards', '1'],
  });
  assert.equal(parseDevCluster('up', []).count, undefined);
  assert.equal(parseDevCluster('up', []).dir, './sluice-cluster');
  assert.equal(parseDevCluster('status', ['--format', 'json']).format, 'json');
  assert.equal(parseDevCluster('add', ['2', '--timeout-ms', '900']).timeoutMs, 900);
  const usage: [string, string[], RegExp][] = [
    ['up', ['0'], /N must be an integer in \[1, 32\]/],
    ['up', ['33'], /N must be an integer/],
    ['up', ['3', '4'], /unexpected argument 4/],
    ['add', ['65'], /K must be an integer in \[1, 64\]/],
    ['down', ['3'], /unexpected argument 3/],
    ['status', ['--format', 'xml'], /--format must be one of text, wide, json, yaml/],
    ['add', ['--', '--shards', '1'], /only `up` takes start flags/],
    ['up', ['--', '--kafka-addr', '1.2.3.4:1'], /--kafka-addr is set by the dev cluster/],
    ['restart', [], /unknown dev cluster command "restart"/],
    ['up', ['--timeout-ms', 'soon'], /--timeout-ms must be an integer/],
  ];
  for (const [verb, argv, message] of usage) {
    assert.throws(() => {
      const cmd = parseDevCluster(verb, argv);
      if (cmd.verb === 'up') newCluster(cmd.count ?? 3, cmd.startArgs, counter());
    }, (err: unknown) => err instanceof UsageError && message.test(err.message), `${verb} ${argv.join(' ')}`);
  }
});

const quorum = (over: Partial<DescribeQuorumResponsePartition> = {}): DescribeQuorumResponsePartition => ({
  partitionIndex: 0, errorCode: 0, errorMessage: null, leaderId: 2, leaderEpoch: 7, highWatermark: 90,
  currentVoters: [1, 2, 3].map((id) => ({ replicaId: id, replicaDirectoryId: '0'.repeat(32), logEndOffset: id === 2 ? 100 : 100 - id * 10, lastFetchTimestamp: -1, lastCaughtUpTimestamp: -1 })),
  observers: [{ replicaId: 4, replicaDirectoryId: '0'.repeat(32), logEndOffset: 60, lastFetchTimestamp: -1, lastCaughtUpTimestamp: -1 }],
  ...over,
});

test('a node\'s quorum view: leader, follower or observer, and its lag behind the leader\'s log end', () => {
  const full = quorum();
  const notLeader = quorum({ errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER, highWatermark: -1, currentVoters: [], observers: [] });
  assert.deepEqual(quorumView(2, full, full), { role: 'leader', leaderId: 2, epoch: 7, highWatermark: 90, lag: 0 });
  assert.deepEqual(quorumView(3, notLeader, full), { role: 'follower', leaderId: 2, epoch: 7, highWatermark: 90, lag: 30 });
  assert.deepEqual(quorumView(4, null, full), { role: 'observer', leaderId: 2, epoch: 7, highWatermark: 90, lag: 40 });
  assert.equal(quorumView(9, null, full)?.role, 'unknown');
  assert.deepEqual(quorumView(3, quorum({ ...notLeader, leaderId: 1, leaderEpoch: 6 }), null), { role: 'unknown', leaderId: 1, epoch: 6, highWatermark: -1, lag: null }, 'a voter\'s own view without the leader\'s');
  assert.equal(quorumView(4, null, null), null);
});

test('status asks each running node for DescribeQuorum and reports a stopped one as down', async (t) => {
  const fake = await FakeBroker.start({
    advertise: new Map([[DescribeQuorumApi.key, [0, 2]]]),
    handlers: new Map([[DescribeQuorumApi.key, (h) => respond(DescribeQuorumApi, h.apiVersion, h.correlationId, {
      errorCode: 0, errorMessage: null, nodes: [],
      topics: [{ topicName: '__cluster_metadata', partitions: [quorum({ leaderId: 3, currentVoters: quorum().currentVoters.map((v) => ({ ...v, logEndOffset: 100 })) })] }],
    })]]),
  });
  t.after(() => fake.stop());
  const dir = mkdtempSync(join(tmpdir(), 'sluice-devc-'));
  const base = newCluster(3, [], counter(50000));
  // A stand-in process whose command line names node 3's data dir, the way `sluice start` does;
  // node 1's pid is this test process, whose command line names no node, so it must not count.
  const standIn = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 30000)', nodeDataDir(dir, base.nodes[2]!)], { stdio: 'ignore' });
  t.after(() => standIn.kill('SIGKILL'));
  const c: DevCluster = {
    ...base,
    nodes: [{ ...base.nodes[0]!, pid: process.pid }, base.nodes[1]!, { ...base.nodes[2]!, controllerPort: fake.port, pid: standIn.pid! }],
  };
  saveCluster(dir, c);
  const statuses = await clusterStatus(dir);
  assert.deepEqual(statuses.map((s) => [s.id, s.running, s.quorumError, s.quorum?.role, s.health]), [
    [1, false, 'not running', undefined, 'down'],
    [2, false, 'not running', undefined, 'down'],
    [3, true, null, 'leader', 'unreachable'],
  ]);
  assert.match(formatStatus(statuses), /^ID\s+PID\s+RUNNING\s+ROLES[^\n]*\n1 .*\n2 .*\n3\s+\d+\s+yes\s+broker,controller\s+127\.0\.0\.1:\d+\s+leader\s+3\s+7\s+0\s+unreachable$/);
  writeFileSync(join(dir, CLUSTER_FILE), '{"version":1}');
  await assert.rejects(clusterStatus(dir), /startArgs must be an array/);
});
