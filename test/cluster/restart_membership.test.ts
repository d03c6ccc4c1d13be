// Process-level restart and membership (issue 13, tests d and e) on a three-node combined cluster:
// (d) all three killed (-9) and restarted come back with the same topics, ids and replicas on
// every node; (e) a voter removed (RemoveRaftVoter) and added back (AddRaftVoter) over the active
// controller's controller listener while topics are being created: every created topic survives,
// the voter set follows each change, and the nodes end with identical metadata.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { KafkaConnection } from '../../src/client/connection.js';
import { AddRaftVoterApi } from '../../src/protocol/apis/add_raft_voter.js';
import { RemoveRaftVoterApi } from '../../src/protocol/apis/remove_raft_voter.js';
import { errorName } from '../../src/protocol/errors.js';
import { ZERO_UUID } from '../helpers/read_back.js';
import { CLUSTER_UNAVAILABLE, ProcessCluster, retryUntil, waitSameMetadata, waitUntil } from './process_cluster.js';

let cluster: ProcessCluster | null = null;
before(async () => {
  if (CLUSTER_UNAVAILABLE === false) cluster = await ProcessCluster.start(3);
});
after(async () => {
  await cluster?.dispose();
});

async function createTopic(c: ProcessCluster, via: number, name: string, partitions = 1): Promise<void> {
  const admin = await c.admin(via, 5_000);
  try {
    await admin.createTopics(name, partitions, 1);
  } finally {
    await admin.close();
  }
}

test('all three nodes killed and restarted serve the same metadata as before', { skip: CLUSTER_UNAVAILABLE, timeout: 120_000 }, async () => {
  const c = cluster as ProcessCluster;
  await c.waitForLeader(c.ids);
  for (let i = 0; i < 5; i++) await retryUntil(10_000, () => createTopic(c, 1 + (i % 3), `durable-${i}`, 1 + i));
  const before = await waitSameMetadata(c, c.ids, 15_000, false);
  for (const id of c.ids) await c.kill9(id);
  await c.restart(...c.ids);
  await c.waitForLeader(c.ids);
  const after = await waitSameMetadata(c, c.ids, 30_000, false);
  assert.equal(after, before);
  for (let i = 0; i < 5; i++) assert.ok(after.includes(`"durable-${i}"`));
});

/** One voter change sent to the active controller's controller listener; retried while leadership moves. */
async function changeVoters(c: ProcessCluster, change: 'add' | 'remove', voterId: number): Promise<void> {
  await retryUntil(30_000, async () => {
    const q = await c.waitForLeader(c.ids);
    const controllerPort = c.node(q.leaderId).controllerPort;
    assert.ok(controllerPort !== null, `leader ${q.leaderId} has a controller listener`);
    const conn = await KafkaConnection.connect({ host: '127.0.0.1', port: controllerPort, clientId: 'sluice-cluster-test', requestTimeoutMs: 15_000 });
    try {
      const res = change === 'remove'
        ? await conn.request(RemoveRaftVoterApi, { clusterId: null, voterId, voterDirectoryId: ZERO_UUID })
        : await conn.request(AddRaftVoterApi, {
          clusterId: null, timeoutMs: 10_000, voterId, voterDirectoryId: ZERO_UUID,
          listeners: [{ name: 'CONTROLLER', host: '127.0.0.1', port: c.node(voterId).controllerPort as number }],
        });
      if (res.errorCode !== 0) throw new Error(`${change} voter ${voterId}: ${errorName(res.errorCode)} ${res.errorMessage ?? ''}`);
    } finally {
      await conn.close();
    }
  }, 200);
}

test('a voter removed and added back while topics are created: no topic lost, voters follow', { skip: CLUSTER_UNAVAILABLE, timeout: 120_000 }, async () => {
  const c = cluster as ProcessCluster;
  const start = await c.waitForLeader(c.ids);
  const voter = c.ids.find((id) => id !== start.leaderId) as number;
  const created: string[] = [];
  let membershipDone = false;
  const creator = (async (): Promise<void> => {
    // Bounded: until the membership changes finish, at most 200 topics or 90 s.
    const deadline = Date.now() + 90_000;
    for (let i = 0; !membershipDone && i < 200 && Date.now() < deadline; i++) {
      const name = `member-${i}`;
      await retryUntil(15_000, () => createTopic(c, 1 + (i % 3), name));
      created.push(name);
    }
  })();
  // Each change lands between creations: a few topics before, between and after.
  const moreCreated = async (n: number): Promise<void> => {
    const target = created.length + n;
    await waitUntil(`${target} topics created`, () => created.length >= target, 30_000);
  };
  try {
    await moreCreated(3);
    await changeVoters(c, 'remove', voter);
    const removed = await c.waitForLeader(c.ids, (q) => !q.voters.includes(voter));
    assert.deepEqual(removed.voters, c.ids.filter((id) => id !== voter));
    await moreCreated(3);
    await changeVoters(c, 'add', voter);
    const added = await c.waitForLeader(c.ids, (q) => q.voters.includes(voter));
    assert.deepEqual(added.voters, c.ids);
    await moreCreated(3);
  } finally {
    membershipDone = true;
    await creator;
  }
  assert.ok(created.length >= 9, 'topics were created before, between and after the changes');
  const digest = await waitSameMetadata(c, c.ids);
  for (const name of created) assert.ok(digest.includes(`"${name}"`), `${name} survived`);
});
