// The shard mesh (--connection-placement shards, issue 16): a ring pair from every shard to every
// other, so a shard serving a placed connection reaches the partitions of its peers without main.
// Main allocates it (`allocateShardMesh`) before spawning the workers and hands each its ends in
// its worker data; on the worker (`joinShardMesh`) shard j drains each peer's request ring as a
// ring lane (`Shard.attachRingLane`), and shard i holds one `RingShardPort` per peer j for its own
// router. With connections on main (--connection-placement main, or where placement falls back to
// main) there is no mesh and nothing of this is allocated.
// Sizes: N shards hold N(N-1) pairs, 2 rings each, so the mesh cannot give each ring main's
// `ringBytes` (16 shards would reserve 15 GiB, every page of it touched once a ring has wrapped).
// `meshRingBytes` shares out about what main's own rings take (2N rings of `ringBytes`): each mesh
// ring gets ringBytes / (N-1), a power of two, never under MESH_MIN_RING_BYTES. What a mesh ring
// cannot carry is not sent over it: the shard forwards to main a Produce whose batch for a peer's
// partition, or a Fetch or ListOffsets whose part for peers, is larger than the peer's ring takes
// (placed_serving.ts), and a Fetch answer trims its file ranges to what its ring takes (outbox.ts).
// Doorbells: one MessageChannel per ring, port1 to the producer's thread, port2 to the consumer's
// (each end rings the other over the one port it holds, as main's rings do across threads).
import { MessageChannel, type MessagePort } from 'node:worker_threads';
import { SpscRing } from './ring_buffer.js';
import { RingDoorbell } from './ring_doorbell.js';
import { RingShardPort } from './ring_shard_port.js';
import type { Shard } from './shard.js';

/** The smallest mesh ring: a produce batch of up to half of it (a frame's limit) still goes over the mesh. */
export const MESH_MIN_RING_BYTES = 256 << 10;

/**
 * Capacity of each mesh ring among `shards` shards whose rings to main have `ringBytes` (a power of
 * two): ringBytes / (shards - 1) rounded down to a power of two, at least MESH_MIN_RING_BYTES (or
 * `ringBytes`, if that is less), so the whole mesh reserves about as much as main's rings do.
 */
export function meshRingBytes(shards: number, ringBytes: number): number {
  if (shards < 2) return 0;
  const share = 2 ** Math.floor(Math.log2(ringBytes / (shards - 1)));
  return Math.min(ringBytes, Math.max(MESH_MIN_RING_BYTES, share));
}

/** One ring pair between this shard and `peer`, as this thread's ends (transferred ports). */
export interface MeshRingPair {
  readonly peer: number;
  readonly requests: SharedArrayBuffer;
  readonly requestsDoorbell: MessagePort;
  readonly answers: SharedArrayBuffer;
  readonly answersDoorbell: MessagePort;
}

/** One shard's ends of the mesh, in its worker data. */
export interface ShardMeshEnds {
  /** Each peer's requests to this shard: drained here as a ring lane, answered on the pair's answer ring. */
  readonly serve: readonly MeshRingPair[];
  /** This shard's requests to each peer, and their answers. */
  readonly reach: readonly MeshRingPair[];
  /** Bound on the overflow queue behind a full request ring, as main's ports have it. */
  readonly maxOverflowBytes: number;
}

/** Every shard's ends of a mesh of `shards` shards, indexed by shard, each ring of `ringBytes` (meshRingBytes). */
export function allocateShardMesh(shards: number, ringBytes: number, maxOverflowBytes: number): ShardMeshEnds[] {
  const ends = Array.from({ length: shards }, () => ({ serve: [] as MeshRingPair[], reach: [] as MeshRingPair[], maxOverflowBytes }));
  for (let from = 0; from < shards; from++) {
    for (let to = 0; to < shards; to++) {
      if (from === to) continue;
      const requests = SpscRing.allocate(ringBytes);
      const answers = SpscRing.allocate(ringBytes);
      // Requests: `from` produces, `to` consumes; answers the other way round.
      const requestBells = new MessageChannel();
      const answerBells = new MessageChannel();
      ends[from]!.reach.push({ peer: to, requests, requestsDoorbell: requestBells.port1, answers, answersDoorbell: answerBells.port2 });
      ends[to]!.serve.push({ peer: from, requests, requestsDoorbell: requestBells.port2, answers, answersDoorbell: answerBells.port1 });
    }
  }
  return ends;
}

/** The ports in `ends`, for the worker's transferList. */
export function meshTransfers(ends: ShardMeshEnds): MessagePort[] {
  return [...ends.serve, ...ends.reach].flatMap((p) => [p.requestsDoorbell, p.answersDoorbell]);
}

/**
 * On shard `shard`'s own thread: attaches every peer's request ring as a ring lane and returns the
 * ports to the peers by shard index (null at this shard's own), not yet started: whoever routes
 * through them starts each with its sink.
 */
export function joinShardMesh(shard: Shard, ends: ShardMeshEnds): (RingShardPort | null)[] {
  for (const p of ends.serve) {
    shard.attachRingLane(new SpscRing(p.requests, new RingDoorbell(p.requestsDoorbell)), new SpscRing(p.answers, new RingDoorbell(p.answersDoorbell)));
  }
  const peers: (RingShardPort | null)[] = Array.from({ length: ends.reach.length + 1 }, () => null);
  for (const p of ends.reach) {
    const requests = new SpscRing(p.requests, new RingDoorbell(p.requestsDoorbell));
    const answers = new SpscRing(p.answers, new RingDoorbell(p.answersDoorbell));
    peers[p.peer] = new RingShardPort(p.peer, requests, answers, ends.maxOverflowBytes);
  }
  return peers;
}
