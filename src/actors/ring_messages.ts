// Binary layouts of the data-plane messages that cross the SPSC rings between the network
// thread and a shard. Both sides encode/decode in place in the ring's data region, so no
// structured clone or JSON touches produce payloads or fetch results. Little-endian throughout.
//
// main -> shard: PRODUCE, FETCH, FETCH_RELEASE, GROUP_CALL, LIST_OFFSETS
// shard -> main: PRODUCE_RESULT, FETCH_RESULT, FETCH_PROGRESS, GROUP_RESULT, LIST_OFFSETS_RESULT
// Every request carries the main thread's request id (reqId) and, per partition, the slot the
// answer fills in that request's response, so results can arrive in any order.
import { CO_ALIGN_BYTES, coAlignPad } from '../common/co_align.js';
import type { FileRange } from '../log/partition_log.js';

export const MsgType = {
  PRODUCE: 1,
  FETCH: 2,
  FETCH_RELEASE: 3,
  GROUP_CALL: 4,
  LIST_OFFSETS: 5,
  PRODUCE_RESULT: 101,
  FETCH_RESULT: 102,
  GROUP_RESULT: 103,
  LIST_OFFSETS_RESULT: 104,
  FETCH_PROGRESS: 105,
} as const;

// ---- PRODUCE: [type u8][acks i8][skip u8][pad][reqId u32][slot u32][handle u32][timeoutMs u32][leaderEpoch i32] (skip bytes) records... ----
// acks is the request's (0, 1 or -1: whether the answer waits for the in-sync replicas); timeoutMs
// bounds how long the partition actor keeps the acknowledgement pending; leaderEpoch is the cluster
// view's epoch under which main found this broker leading (a newer one than the actor knows means
// the actor has not yet been told of that leadership). The records start `skip` (0-7) bytes after
// the header, at the source's address modulo 8, so both copies of a batch through the ring's shared
// memory run a word at a time (co_align.ts).
export const PRODUCE_HEADER_BYTES = 24;

export interface ProduceAsk {
  reqId: number;
  slot: number;
  handle: number;
  acks: number;
  timeoutMs: number;
  leaderEpoch: number;
}

/** Ring room a PRODUCE of `recordsLength` bytes of records reserves: header, alignment skip, records. */
export function produceMessageBytes(recordsLength: number): number {
  return PRODUCE_HEADER_BYTES + CO_ALIGN_BYTES - 1 + recordsLength;
}

/** Writes a PRODUCE into room of produceMessageBytes(records.length); returns the bytes it used. */
export function writeProduce(b: Buffer, at: number, ask: ProduceAsk, records: Buffer): number {
  const skip = coAlignPad(records.byteOffset, b.byteOffset + at + PRODUCE_HEADER_BYTES);
  b[at] = MsgType.PRODUCE;
  b.writeInt8(ask.acks, at + 1);
  b[at + 2] = skip;
  b.writeUInt32LE(ask.reqId, at + 4);
  b.writeUInt32LE(ask.slot, at + 8);
  b.writeUInt32LE(ask.handle, at + 12);
  b.writeUInt32LE(ask.timeoutMs, at + 16);
  b.writeInt32LE(ask.leaderEpoch, at + 20);
  records.copy(b, at + PRODUCE_HEADER_BYTES + skip);
  return PRODUCE_HEADER_BYTES + skip + records.length;
}

/** Where the records of the PRODUCE at `at` start (they end where the message does). */
export function produceRecordsAt(b: Buffer, at: number): number {
  return at + PRODUCE_HEADER_BYTES + b[at + 2]!;
}

export function readProduce(b: Buffer, at: number): ProduceAsk {
  return {
    reqId: b.readUInt32LE(at + 4),
    slot: b.readUInt32LE(at + 8),
    handle: b.readUInt32LE(at + 12),
    acks: b.readInt8(at + 1),
    timeoutMs: b.readUInt32LE(at + 16),
    leaderEpoch: b.readInt32LE(at + 20),
  };
}

// ---- PRODUCE_RESULT: [type][pad][error i16][reqId u32][slot u32][pad u32][base f64][appendTime f64][logStart f64] ----
export const PRODUCE_RESULT_BYTES = 40;

export interface ProduceResult {
  reqId: number;
  slot: number;
  errorCode: number;
  baseOffset: number;
  logAppendTime: number;
  logStartOffset: number;
}

export function writeProduceResult(b: Buffer, at: number, r: ProduceResult): void {
  b[at] = MsgType.PRODUCE_RESULT;
  b.writeInt16LE(r.errorCode, at + 2);
  b.writeUInt32LE(r.reqId, at + 4);
  b.writeUInt32LE(r.slot, at + 8);
  b.writeDoubleLE(r.baseOffset, at + 16);
  b.writeDoubleLE(r.logAppendTime, at + 24);
  b.writeDoubleLE(r.logStartOffset, at + 32);
}

export function readProduceResult(b: Buffer, at: number): ProduceResult {
  return {
    errorCode: b.readInt16LE(at + 2),
    reqId: b.readUInt32LE(at + 4),
    slot: b.readUInt32LE(at + 8),
    baseOffset: b.readDoubleLE(at + 16),
    logAppendTime: b.readDoubleLE(at + 24),
    logStartOffset: b.readDoubleLE(at + 32),
  };
}

// ---- FETCH: [type][flags u8][pad u16][reqId][maxWaitMs][minBytes][maxBytes][count][replicaId i32][pad u32][replicaEpoch f64]
// then count x 40-byte entries ----
// entry: [slot u32][handle u32][fetchOffset f64][partitionMaxBytes u32][lastFetchedEpoch i32]
//        [currentLeaderEpoch i32][pad u32][logStartOffset f64]
// A replicaId >= 0 is a follower's fetch (main checked it names a replica of every partition): the
// leader counts its fetch offsets for the ISR and high watermark and reads to its log end.
export const FETCH_HEADER_BYTES = 40;
export const FETCH_ENTRY_BYTES = 40;
/**
 * Set when the request spans several shards: min_bytes applies to their sum, so a shard holding
 * less parks and reports its bytes (FETCH_PROGRESS) for main to decide when to release it.
 */
export const FETCH_FLAG_MULTI_SHARD = 1;

export interface FetchPartitionAsk {
  slot: number;
  handle: number;
  fetchOffset: number;
  partitionMaxBytes: number;
  /** The epoch of the last batch the fetcher holds (Fetch v12+), -1 when not given; checked for divergence. */
  lastFetchedEpoch: number;
  /** The leader epoch the fetcher believes current (Fetch v9+), -1 when not given. */
  currentLeaderEpoch: number;
  /** A follower's own log start offset (Fetch v5+), -1 from consumers. */
  logStartOffset: number;
}

export interface FetchAsk {
  reqId: number;
  flags: number;
  /** -1 for consumers; a follower's broker id. */
  replicaId: number;
  /** The follower's broker epoch (Fetch v15+ ReplicaState), -1 when not given. */
  replicaEpoch: number;
  maxWaitMs: number;
  minBytes: number;
  maxBytes: number;
  partitions: FetchPartitionAsk[];
}

export function fetchBytes(count: number): number {
  return FETCH_HEADER_BYTES + count * FETCH_ENTRY_BYTES;
}

export function writeFetch(b: Buffer, at: number, f: FetchAsk): void {
  b[at] = MsgType.FETCH;
  b[at + 1] = f.flags;
  b.writeUInt32LE(f.reqId, at + 4);
  b.writeUInt32LE(f.maxWaitMs, at + 8);
  b.writeUInt32LE(f.minBytes, at + 12);
  b.writeUInt32LE(f.maxBytes, at + 16);
  b.writeUInt32LE(f.partitions.length, at + 20);
  b.writeInt32LE(f.replicaId, at + 24);
  b.writeDoubleLE(f.replicaEpoch, at + 32);
  let p = at + FETCH_HEADER_BYTES;
  for (const e of f.partitions) {
    b.writeUInt32LE(e.slot, p);
    b.writeUInt32LE(e.handle, p + 4);
    b.writeDoubleLE(e.fetchOffset, p + 8);
    b.writeUInt32LE(e.partitionMaxBytes, p + 16);
    b.writeInt32LE(e.lastFetchedEpoch, p + 20);
    b.writeInt32LE(e.currentLeaderEpoch, p + 24);
    b.writeDoubleLE(e.logStartOffset, p + 32);
    p += FETCH_ENTRY_BYTES;
  }
}

export function readFetch(b: Buffer, at: number): FetchAsk {
  const count = b.readUInt32LE(at + 20);
  const partitions: FetchPartitionAsk[] = new Array(count);
  let p = at + FETCH_HEADER_BYTES;
  for (let i = 0; i < count; i++) {
    partitions[i] = {
      slot: b.readUInt32LE(p),
      handle: b.readUInt32LE(p + 4),
      fetchOffset: b.readDoubleLE(p + 8),
      partitionMaxBytes: b.readUInt32LE(p + 16),
      lastFetchedEpoch: b.readInt32LE(p + 20),
      currentLeaderEpoch: b.readInt32LE(p + 24),
      logStartOffset: b.readDoubleLE(p + 32),
    };
    p += FETCH_ENTRY_BYTES;
  }
  return {
    flags: b[at + 1]!,
    replicaId: b.readInt32LE(at + 24),
    replicaEpoch: b.readDoubleLE(at + 32),
    reqId: b.readUInt32LE(at + 4),
    maxWaitMs: b.readUInt32LE(at + 8),
    minBytes: b.readUInt32LE(at + 12),
    maxBytes: b.readUInt32LE(at + 16),
    partitions,
  };
}

// ---- FETCH_RELEASE: [type][pad x3][reqId u32] ----
export const FETCH_RELEASE_BYTES = 8;

export function writeFetchRelease(b: Buffer, at: number, reqId: number): void {
  b[at] = MsgType.FETCH_RELEASE;
  b.writeUInt32LE(reqId, at + 4);
}

// ---- FETCH_PROGRESS: [type][pad x3][reqId u32][bytes f64] ----
// A shard's parked part of a multi-shard fetch now holds `bytes` readable bytes.
export const FETCH_PROGRESS_BYTES = 16;

export function writeFetchProgress(b: Buffer, at: number, reqId: number, bytes: number): void {
  b[at] = MsgType.FETCH_PROGRESS;
  b.writeUInt32LE(reqId, at + 4);
  b.writeDoubleLE(bytes, at + 8);
}

export function readFetchProgress(b: Buffer, at: number): { reqId: number; bytes: number } {
  return { reqId: b.readUInt32LE(at + 4), bytes: b.readDoubleLE(at + 8) };
}

// ---- FETCH_RESULT: [type][waited u8][pad x2][reqId u32][count u32][pad u32] then per partition:
// [slot u32][error i16][pad u16][highWatermark f64][logStartOffset f64][rangeCount u32]
// [divergingEpoch i32][divergingEndOffset f64]
// then rangeCount x [position f64][length u32][pathBytes u32][path utf8] ----
export const FETCH_RESULT_HEADER_BYTES = 16;
const PART_BYTES = 40;
const RANGE_BYTES = 16;

/** Where the fetcher's history parts from this log's (Fetch v12+ DivergingEpoch): the epoch and its end offset here. */
export interface DivergingEpoch {
  epoch: number;
  endOffset: number;
}

export interface FetchPartitionResult {
  slot: number;
  errorCode: number;
  highWatermark: number;
  logStartOffset: number;
  ranges: FileRange[];
  /** Set (with no ranges) when the fetcher's last fetched epoch disagrees with this log. */
  diverging: DivergingEpoch | null;
}

export function fetchResultBytes(parts: readonly FetchPartitionResult[]): number {
  let n = FETCH_RESULT_HEADER_BYTES;
  for (const p of parts) {
    n += PART_BYTES;
    for (const r of p.ranges) n += RANGE_BYTES + Buffer.byteLength(r.path);
  }
  return n;
}

/**
 * `parts` cut to at most `maxBytes` encoded: each partition keeps its own fields, and file ranges
 * are kept in order while they fit (a mesh ring is smaller than main's, and a partition with many
 * small segments answers a range per segment). A fetch may always answer less than there is: the
 * client fetches the rest next time. The first range is always kept: a partition's fields and one
 * range (a path of at most a few hundred bytes) fit any ring.
 */
export function fitFetchResult(parts: readonly FetchPartitionResult[], maxBytes: number): FetchPartitionResult[] {
  let room = maxBytes - FETCH_RESULT_HEADER_BYTES - parts.length * PART_BYTES;
  let first = true;
  return parts.map((p) => {
    let kept = 0;
    for (const r of p.ranges) {
      const bytes = RANGE_BYTES + Buffer.byteLength(r.path);
      if (bytes > room && !first) break;
      room -= bytes;
      first = false;
      kept++;
    }
    return kept === p.ranges.length ? p : { ...p, ranges: p.ranges.slice(0, kept) };
  });
}

/** `waited`: the shard parked the fetch before answering (min_bytes was not there at once). */
export function writeFetchResult(b: Buffer, at: number, reqId: number, parts: readonly FetchPartitionResult[], waited: boolean): void {
  b[at] = MsgType.FETCH_RESULT;
  b[at + 1] = waited ? 1 : 0;
  b.writeUInt32LE(reqId, at + 4);
  b.writeUInt32LE(parts.length, at + 8);
  let p = at + FETCH_RESULT_HEADER_BYTES;
  for (const part of parts) {
    b.writeUInt32LE(part.slot, p);
    b.writeInt16LE(part.errorCode, p + 4);
    b.writeDoubleLE(part.highWatermark, p + 8);
    b.writeDoubleLE(part.logStartOffset, p + 16);
    b.writeUInt32LE(part.ranges.length, p + 24);
    b.writeInt32LE(part.diverging?.epoch ?? -1, p + 28);
    b.writeDoubleLE(part.diverging?.endOffset ?? -1, p + 32);
    p += PART_BYTES;
    for (const r of part.ranges) {
      b.writeDoubleLE(r.position, p);
      b.writeUInt32LE(r.length, p + 8);
      const n = b.write(r.path, p + RANGE_BYTES, 'utf8');
      b.writeUInt32LE(n, p + 12);
      p += RANGE_BYTES + n;
    }
  }
}

export function readFetchResult(b: Buffer, at: number): { reqId: number; parts: FetchPartitionResult[]; waited: boolean } {
  const reqId = b.readUInt32LE(at + 4);
  const count = b.readUInt32LE(at + 8);
  const parts: FetchPartitionResult[] = new Array(count);
  let p = at + FETCH_RESULT_HEADER_BYTES;
  for (let i = 0; i < count; i++) {
    const rangeCount = b.readUInt32LE(p + 24);
    const divergingEpoch = b.readInt32LE(p + 28);
    const part: FetchPartitionResult = {
      slot: b.readUInt32LE(p),
      errorCode: b.readInt16LE(p + 4),
      highWatermark: b.readDoubleLE(p + 8),
      logStartOffset: b.readDoubleLE(p + 16),
      ranges: new Array(rangeCount),
      diverging: divergingEpoch < 0 ? null : { epoch: divergingEpoch, endOffset: b.readDoubleLE(p + 32) },
    };
    p += PART_BYTES;
    for (let j = 0; j < rangeCount; j++) {
      const pathBytes = b.readUInt32LE(p + 12);
      part.ranges[j] = {
        position: b.readDoubleLE(p),
        length: b.readUInt32LE(p + 8),
        path: b.toString('utf8', p + RANGE_BYTES, p + RANGE_BYTES + pathBytes),
      };
      p += RANGE_BYTES + pathBytes;
    }
    parts[i] = part;
  }
  return { reqId, parts, waited: b[at + 1] === 1 };
}

// ---- GROUP_CALL: [type][pad x3][reqId u32][handle u32][pad u32] then a V8-serialized GroupCall;
// GROUP_RESULT: [type][pad x3][reqId u32] then a V8-serialized GroupReply. Group coordination
// is small and infrequent next to produce/fetch bytes, so its structured payloads are
// serialized rather than laid out by hand; they still ride the rings to keep one ordered,
// bounded path per shard. ----
export const GROUP_CALL_HEADER_BYTES = 16;
export const GROUP_RESULT_HEADER_BYTES = 8;

export function writeGroupCall(b: Buffer, at: number, reqId: number, handle: number, payload: Buffer): void {
  b[at] = MsgType.GROUP_CALL;
  b.writeUInt32LE(reqId, at + 4);
  b.writeUInt32LE(handle, at + 8);
  payload.copy(b, at + GROUP_CALL_HEADER_BYTES);
}

export function writeGroupResult(b: Buffer, at: number, reqId: number, payload: Buffer): void {
  b[at] = MsgType.GROUP_RESULT;
  b.writeUInt32LE(reqId, at + 4);
  payload.copy(b, at + GROUP_RESULT_HEADER_BYTES);
}

// ---- LIST_OFFSETS: [type][by u8][pad x2][reqId u32][count u32][pad u32] then count x 16-byte entries ----
// Offset lookups that read a partition's log without waiting: `by` says what each entry's key is.
// entry: [slot u32][handle u32][timestamp f64] (timestamp: -1 latest, -2 earliest, -3 max timestamp)
// One message per shard carries every partition of a request that shard owns.
export const LIST_OFFSETS_HEADER_BYTES = 16;
export const LIST_OFFSETS_ENTRY_BYTES = 16;

/**
 * TIMESTAMP: ListOffsets (the key is -1 latest, -2 earliest, -3 max timestamp, or a time);
 * EPOCH_END: OffsetsForLeaderEpoch (the key is a leader epoch; the answer's offset is where that
 * epoch ends and its leaderEpoch the largest known epoch <= the key).
 */
export const OffsetLookupBy = { TIMESTAMP: 0, EPOCH_END: 1 } as const;
export type OffsetLookupBy = (typeof OffsetLookupBy)[keyof typeof OffsetLookupBy];

export interface ListOffsetsPartitionAsk {
  slot: number;
  handle: number;
  key: number;
}

export interface ListOffsetsAsk {
  reqId: number;
  by: OffsetLookupBy;
  partitions: ListOffsetsPartitionAsk[];
}

export function listOffsetsBytes(count: number): number {
  return LIST_OFFSETS_HEADER_BYTES + count * LIST_OFFSETS_ENTRY_BYTES;
}

export function writeListOffsets(b: Buffer, at: number, ask: ListOffsetsAsk): void {
  b[at] = MsgType.LIST_OFFSETS;
  b[at + 1] = ask.by;
  b.writeUInt32LE(ask.reqId, at + 4);
  b.writeUInt32LE(ask.partitions.length, at + 8);
  let p = at + LIST_OFFSETS_HEADER_BYTES;
  for (const e of ask.partitions) {
    b.writeUInt32LE(e.slot, p);
    b.writeUInt32LE(e.handle, p + 4);
    b.writeDoubleLE(e.key, p + 8);
    p += LIST_OFFSETS_ENTRY_BYTES;
  }
}

export function readListOffsets(b: Buffer, at: number): ListOffsetsAsk {
  const count = b.readUInt32LE(at + 8);
  const partitions: ListOffsetsPartitionAsk[] = new Array(count);
  let p = at + LIST_OFFSETS_HEADER_BYTES;
  for (let i = 0; i < count; i++) {
    partitions[i] = { slot: b.readUInt32LE(p), handle: b.readUInt32LE(p + 4), key: b.readDoubleLE(p + 8) };
    p += LIST_OFFSETS_ENTRY_BYTES;
  }
  const by = b[at + 1] === OffsetLookupBy.EPOCH_END ? OffsetLookupBy.EPOCH_END : OffsetLookupBy.TIMESTAMP;
  return { reqId: b.readUInt32LE(at + 4), by, partitions };
}

// ---- LIST_OFFSETS_RESULT: [type][pad x3][reqId u32][count u32][pad u32] then count x 32-byte entries ----
// entry: [slot u32][error i16][pad u16][offset f64][timestamp f64][leaderEpoch i32][pad u32]
export const LIST_OFFSETS_RESULT_HEADER_BYTES = 16;
export const LIST_OFFSETS_RESULT_ENTRY_BYTES = 32;

export interface ListOffsetsPartitionResult {
  slot: number;
  errorCode: number;
  offset: number;
  timestamp: number;
  leaderEpoch: number;
}

export function listOffsetsResultBytes(count: number): number {
  return LIST_OFFSETS_RESULT_HEADER_BYTES + count * LIST_OFFSETS_RESULT_ENTRY_BYTES;
}

export function writeListOffsetsResult(b: Buffer, at: number, reqId: number, parts: readonly ListOffsetsPartitionResult[]): void {
  b[at] = MsgType.LIST_OFFSETS_RESULT;
  b.writeUInt32LE(reqId, at + 4);
  b.writeUInt32LE(parts.length, at + 8);
  let p = at + LIST_OFFSETS_RESULT_HEADER_BYTES;
  for (const r of parts) {
    b.writeUInt32LE(r.slot, p);
    b.writeInt16LE(r.errorCode, p + 4);
    b.writeDoubleLE(r.offset, p + 8);
    b.writeDoubleLE(r.timestamp, p + 16);
    b.writeInt32LE(r.leaderEpoch, p + 24);
    p += LIST_OFFSETS_RESULT_ENTRY_BYTES;
  }
}

export function readListOffsetsResult(b: Buffer, at: number): { reqId: number; parts: ListOffsetsPartitionResult[] } {
  const count = b.readUInt32LE(at + 8);
  const parts: ListOffsetsPartitionResult[] = new Array(count);
  let p = at + LIST_OFFSETS_RESULT_HEADER_BYTES;
  for (let i = 0; i < count; i++) {
    parts[i] = {
      slot: b.readUInt32LE(p),
      errorCode: b.readInt16LE(p + 4),
      offset: b.readDoubleLE(p + 8),
      timestamp: b.readDoubleLE(p + 16),
      leaderEpoch: b.readInt32LE(p + 24),
    };
    p += LIST_OFFSETS_RESULT_ENTRY_BYTES;
  }
  return { reqId: b.readUInt32LE(at + 4), parts };
}
