// PartitionRouter's group calls: a call goes to the shard owning the offsets partition, its
// reply is matched by request id, survives the ring memory it arrived in being reused, and a
// dead shard fails its outstanding calls instead of leaving them hanging.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { deserialize, serialize } from 'node:v8';
import { PartitionRouter } from '../../../src/actors/partition_router.js';
import type { ShardPort } from '../../../src/actors/shard_port.js';
import { ShardTable } from '../../../src/actors/shard_table.js';
import type { GroupCall, GroupReply } from '../../../src/coordinator/groups/group_api.js';
import { ErrorCode, KafkaError } from '../../../src/protocol/errors.js';

function setup(): { router: PartitionRouter; handle: number; sent: { reqId: number; call: GroupCall }[] } {
  const table = new ShardTable(2);
  const { handle, shard } = table.reserve();
  table.publish('__consumer_offsets', 0, handle, shard);
  const router = new PartitionRouter(table);
  const sent: { reqId: number; call: GroupCall }[] = [];
  const host = { groupCall: (reqId: number, _h: number, payload: Buffer) => sent.push({ reqId, call: deserialize(payload) as GroupCall }) > 0 };
  router.attach([host, host] as unknown as ShardPort[]);
  return { router, handle, sent };
}

const sync: GroupCall = { kind: 'sync', groupId: 'g', generationId: 1, memberId: 'm', groupInstanceId: null, protocolType: null, protocolName: null, assignments: [] };

test('a reply read from reused ring memory keeps its bytes', async () => {
  const { router, handle, sent } = setup();
  const pending = router.groupCall(handle, sync);
  const reply: GroupReply = { kind: 'sync', errorCode: 0, protocolType: 'consumer', protocolName: 'range', assignment: Buffer.from('assigned') };
  const ring = Buffer.from(new SharedArrayBuffer(256));
  const bytes = serialize(reply);
  bytes.copy(ring, 16);
  router.onGroupResult(0, sent[0]!.reqId, ring.subarray(16, 16 + bytes.length));
  ring.fill(0xff);
  const got = await pending;
  assert.equal(got.kind, 'sync');
  assert.equal(Buffer.from((got as Extract<GroupReply, { kind: 'sync' }>).assignment).toString(), 'assigned');
});

test('replies are matched by request id; a dead shard fails what it owed', async () => {
  const { router, handle, sent } = setup();
  const a = router.groupCall(handle, sync);
  const b = router.groupCall(handle, { ...sync, memberId: 'other' });
  assert.equal(sent.length, 2);
  router.onGroupResult(0, sent[1]!.reqId, serialize({ kind: 'heartbeat', errorCode: 27 }));
  assert.deepEqual(await b, { kind: 'heartbeat', errorCode: 27 });
  for (const shard of [0, 1]) router.failShard(shard);
  await assert.rejects(a, (e: unknown) => e instanceof KafkaError && e.code === ErrorCode.COORDINATOR_NOT_AVAILABLE);
  await assert.rejects(router.groupCall(999, sync), (e: unknown) => e instanceof KafkaError && e.code === ErrorCode.NOT_COORDINATOR);
});
