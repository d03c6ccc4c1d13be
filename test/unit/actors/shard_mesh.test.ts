// Two Shards on one thread joined by the shard mesh (allocateShardMesh + joinShardMesh, as the
// workers join it), shard 0's router reaching shard 1's partition through its RingShardPort and
// shard 1 draining that ring as a ring lane: a produce read back by a fetch and ListOffsets,
// nothing on either shard's lane 0; a request ring too small for a burst blocks the port, which
// drains its overflow in order (its own copies of the batches: the callers' are reused at once),
// and refuses a send past its overflow bound; a stopped shard's ring
// lane drains nothing more. The mesh's ring size (meshRingBytes) keeps the whole mesh about the
// size of main's rings, down to its floor.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, it } from 'node:test';
import { LocalShardPort } from '../../../src/actors/local_shard_port.js';
import { PartitionRouter } from '../../../src/actors/partition_router.js';
import type { RingShardPort } from '../../../src/actors/ring_shard_port.js';
import { MESH_MIN_RING_BYTES, allocateShardMesh, joinShardMesh, meshRingBytes } from '../../../src/actors/shard_mesh.js';
import { ShardTable } from '../../../src/actors/shard_table.js';
import { ErrorCode } from '../../../src/protocol/errors.js';
import { HostedShard } from '../../helpers/hosted_shard.js';
import { batchOf } from '../log/log_fixture.js';
import { closedAfterEach } from '../../helpers/closed_after_each.js';

/** Shard 0's router over the mesh: its own shard through a LocalShardPort, shard 1 through the mesh. */
class MeshRig {
  readonly table = new ShardTable(2);
  readonly router = new PartitionRouter(this.table);
  readonly shards = [new HostedShard(0), new HostedShard(1)];
  /** Each shard's ports to its peers, as joinShardMesh gave them. */
  readonly peers: (RingShardPort | null)[][];
  readonly handle: number;
  // Doorbell waits do not hold the loop (in the broker the worker's control port does).
  readonly keepAlive = setInterval(() => undefined, 1000);

  constructor(ringBytes: number, maxOverflowBytes: number) {
    const ends = allocateShardMesh(2, ringBytes, maxOverflowBytes);
    this.peers = this.shards.map((s, i) => joinShardMesh(s.shard, ends[i]!));
    assert.equal(this.peers[0]![0], null, 'no port to itself');
    this.router.attach([new LocalShardPort(this.shards[0]!.shard, 0, this.router), this.peer.start(this.router)]);
    this.table.reserve();
    const { handle, shard } = this.table.reserve();
    assert.equal(shard, 1);
    this.shards[1]!.open(handle, 0);
    this.table.publish('t', 0, handle, 1);
    this.handle = handle;
  }

  /** Shard 0's port to shard 1. */
  get peer(): RingShardPort {
    return this.peers[0]![1]!;
  }

  async close(): Promise<void> {
    for (const s of this.shards) {
      await s.close();
      assert.equal(s.outbound.peek(), -1, 'nothing was answered on lane 0');
    }
    // Shard 1's ring lane from shard 0, woken by an empty message, sees the shard stopped and
    // leaves it unread (a running loop would take it).
    const requests = this.peer.requests;
    assert.ok(requests.reserve(0) >= 0);
    requests.publish();
    await new Promise((resolve) => setTimeout(resolve, 20));
    const stats = requests.stats();
    assert.equal(stats.messagesRead, stats.messagesWritten - 1, 'the stopped shard drained nothing more');
    this.peer.close();
    clearInterval(this.keepAlive);
    for (const s of this.shards) assert.deepEqual(s.errors, []);
  }
}

const rig = closedAfterEach((ringBytes: number = 1 << 20, maxOverflowBytes: number = 1 << 20) => new MeshRig(ringBytes, maxOverflowBytes));

const ONE_MB = 1 << 20;
const PRODUCE_TIMEOUT_MS = 2000;
const BOUNDED = { timeout: 15_000 };
/** Bytes of a record batch before its CRC'd part (base offset, length, leader epoch, magic, CRC): what the log stamps. */
const STAMPED_PREFIX_BYTES = 21;

describe('shard mesh: a peer shard reached over its ring pair', () => {
  it('takes a produce through the RingShardPort and reads it back with a fetch and ListOffsets', BOUNDED, async () => {
    const r = rig();
    const batches = [batchOf(3, 10), batchOf(2, 20)];
    const produced = [];
    for (const records of batches) produced.push(...(await r.router.produce([{ handle: r.handle, records, leaderEpoch: 0 }], PRODUCE_TIMEOUT_MS, 1)));
    assert.deepEqual(produced.map((o) => [o.errorCode, o.baseOffset]), [[ErrorCode.NONE, 0], [ErrorCode.NONE, 3]]);

    const fetched = await r.router.fetch(
      [{ handle: r.handle, fetchOffset: 0, partitionMaxBytes: ONE_MB, lastFetchedEpoch: -1, currentLeaderEpoch: -1, logStartOffset: -1 }], 0, 1, ONE_MB,
    );
    const part = fetched.parts[0]!;
    assert.equal(part.errorCode, ErrorCode.NONE);
    assert.equal(part.highWatermark, 5);
    const read = Buffer.concat(part.ranges.map((range) => readFileSync(range.path).subarray(range.position, range.position + range.length)));
    assert.equal(read.length, batches[0]!.length + batches[1]!.length, 'both batches, whole');
    let at = 0;
    for (const b of batches) {
      assert.ok(read.subarray(at + STAMPED_PREFIX_BYTES, at + b.length).equals(b.subarray(STAMPED_PREFIX_BYTES)), 'the records as produced');
      at += b.length;
    }

    const offsets = await r.router.listOffsets([{ handle: r.handle, timestamp: -1 }, { handle: r.handle, timestamp: -2 }]);
    assert.deepEqual(offsets.map((o) => [o.errorCode, o.offset]), [[ErrorCode.NONE, 5], [ErrorCode.NONE, 0]]);
    assert.equal(r.shards[1]!.shard.introspect().handled, 4, 'shard 1 drained the mesh lane: two produces, a fetch, a ListOffsets');
  });

  it('blocks behind a full request ring and drains its overflow in order', BOUNDED, async () => {
    // The smallest ring: a burst of 1 KiB batches, sent in one turn, cannot fit.
    const r = rig(1 << 16);
    const BURST = 200;
    const sent = Array.from({ length: BURST }, () => batchOf(1, 1000));
    const produces = sent.map((records) => r.router.produce([{ handle: r.handle, records, leaderEpoch: 0 }], PRODUCE_TIMEOUT_MS, 1));
    assert.equal(r.peer.blocked, true, 'the burst overflowed the ring');
    // The port reads a caller's batch during the call only: a placed connection's frame buffer
    // takes the next frame at once. What waits in the overflow must be the port's own copy.
    for (const records of sent) records.fill(0);
    assert.deepEqual(r.router.blockedShards(), [r.peer]);
    await r.peer.whenUnblocked();
    assert.equal(r.peer.blocked, false);
    const outcomes = (await Promise.all(produces)).map((o) => o[0]!);
    assert.deepEqual(outcomes.map((o) => o.errorCode), outcomes.map(() => ErrorCode.NONE));
    assert.deepEqual(outcomes.map((o) => o.baseOffset), outcomes.map((_, i) => i), 'appended in send order');
  });

  it('refuses a send past the overflow bound', BOUNDED, async () => {
    const r = rig(1 << 16, 4096);
    const records = batchOf(1, 1000);
    const produces = Array.from({ length: 100 }, () => r.router.produce([{ handle: r.handle, records, leaderEpoch: 0 }], PRODUCE_TIMEOUT_MS, 1));
    const outcomes = (await Promise.all(produces)).map((o) => o[0]!.errorCode);
    assert.ok(outcomes.includes(ErrorCode.NONE), 'what fit was appended');
    assert.ok(outcomes.some((c) => c !== ErrorCode.NONE), 'what did not fit was refused, not queued without bound');
  });

  it('sizes its rings so the whole mesh reserves about what main\'s rings do, never under its floor', () => {
    const MIB = 1 << 20;
    assert.deepEqual([2, 3, 5, 6, 16, 64, 200].map((n) => meshRingBytes(n, 32 * MIB) / 1024), [32768, 16384, 8192, 4096, 2048, 512, 256]);
    assert.equal(meshRingBytes(4, 64 << 10), 64 << 10, 'never more than main\'s own ring');
    assert.equal(meshRingBytes(1, 32 * MIB), 0, 'one shard has no mesh');
    fc.assert(fc.property(fc.integer({ min: 2, max: 256 }), fc.integer({ min: 16, max: 30 }), (shards, log2) => {
      const ringBytes = 2 ** log2;
      const bytes = meshRingBytes(shards, ringBytes);
      assert.equal(bytes & (bytes - 1), 0, 'a power of two');
      assert.ok(bytes >= Math.min(ringBytes, MESH_MIN_RING_BYTES) && bytes <= ringBytes);
      const mesh = 2 * shards * (shards - 1) * bytes;
      if (bytes > MESH_MIN_RING_BYTES) assert.ok(mesh <= 2 * shards * ringBytes, `${shards} shards: mesh ${mesh} over main's ${2 * shards * ringBytes}`);
    }));
  });
});
