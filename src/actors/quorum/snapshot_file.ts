// The metadata quorum's snapshot file format: `<endOffset, 20 digits>-<epoch, 10 digits>.checkpoint`
// (KRaft's naming, KIP-630) holding a header (snapshot id, voters, data size, CRC-32C of the data,
// CRC-32C of the header) then the state machine's bytes. Pure encode/decode; any thread.
// Invariant: decode accepts exactly what encode produces for the id in the file's name, and the
// version 1 files older Sluice wrote; anything else (torn, flipped, renamed) is refused with the reason.
import { EntryBatchError, bytesView, decodeVoters, encodeVoters } from '../../coordinator/raft/entry_batches.js';
import { crc32c, readInt64, writeInt64 } from '../../protocol/record_batch.js';
import type { NodeId, OffsetAndEpoch, Snapshot, SnapshotMeta } from '../../coordinator/raft/types.js';

export const SNAPSHOT_SUFFIX = '.checkpoint';
/** A snapshot being written: renamed to its final name only once complete and fsync'd. */
export const PART_SUFFIX = '.checkpoint.part';

const NAME = /^(\d{20})-(\d{10})\.checkpoint$/;
// Layout: magic u32 "SLSN", version u8, endOffset i64, epoch i32, then the voters, then data size
// i64, data CRC-32C u32, header CRC-32C u32 (of every header byte before it). The voters are, in
// version 2, a u32 length and the snapshot's VotersRecord (ids and endpoints); in version 1 (ids
// only, still read) a u32 count and an i32 id each.
const MAGIC = 0x534c534e;
const VERSION = 2;
const IDS_VERSION = 1;
const FIXED_BYTES = 4 + 1 + 8 + 4 + 4 + 8 + 4 + 4;
/** Offset of the voters' u32 length (version 2) or count (version 1). */
const VOTERS_AT = 17;
/** Far above any real quorum; a larger count marks a damaged version 1 header. */
const MAX_SNAPSHOT_VOTERS = 1024;
/** Far above any real quorum's VotersRecord (a few endpoints per voter); a larger length marks a damaged header. */
const MAX_VOTERS_RECORD_BYTES = 1 << 20;

/** A snapshot read from its file, and where its data starts there. */
export interface StoredSnapshot {
  readonly snapshot: Snapshot;
  readonly dataOffset: number;
}

export function snapshotFileName(id: OffsetAndEpoch): string {
  return `${String(id.endOffset).padStart(20, '0')}-${String(id.epoch).padStart(10, '0')}${SNAPSHOT_SUFFIX}`;
}

export function partFileName(id: OffsetAndEpoch): string {
  return snapshotFileName(id) + PART_SUFFIX.slice(SNAPSHOT_SUFFIX.length);
}

/** The id a snapshot file's name carries, or null for any other file. */
export function parseSnapshotFileName(name: string): OffsetAndEpoch | null {
  const m = NAME.exec(name);
  if (!m) return null;
  const endOffset = Number(m[1]);
  const epoch = Number(m[2]);
  return Number.isSafeInteger(endOffset) && epoch <= 0x7fffffff ? { endOffset, epoch } : null;
}

/** Where the data starts in a file this module writes for `meta`. */
export function snapshotHeaderBytes(meta: SnapshotMeta): number {
  return FIXED_BYTES + meta.votersRecord.byteLength;
}

export function encodeSnapshotHeader(meta: SnapshotMeta, dataCrc: number): Buffer {
  const record = meta.votersRecord;
  if (record.byteLength > MAX_VOTERS_RECORD_BYTES) throw new RangeError(`snapshot VotersRecord of ${record.byteLength} bytes (at most ${MAX_VOTERS_RECORD_BYTES})`);
  const buf = Buffer.alloc(snapshotHeaderBytes(meta));
  let pos = buf.writeUInt32BE(MAGIC, 0);
  pos = buf.writeUInt8(VERSION, pos);
  writeInt64(buf, pos, meta.id.endOffset);
  pos = buf.writeInt32BE(meta.id.epoch, pos + 8);
  pos = buf.writeUInt32BE(record.byteLength, pos);
  buf.set(record, pos);
  pos += record.byteLength;
  writeInt64(buf, pos, meta.size);
  pos = buf.writeUInt32BE(dataCrc >>> 0, pos + 8);
  buf.writeUInt32BE(crc32c(buf.subarray(0, pos)), pos);
  return buf;
}

export function encodeSnapshot(s: Snapshot): Buffer {
  if (s.data.length !== s.meta.size) throw new RangeError(`snapshot data of ${s.data.length} bytes, its meta says ${s.meta.size}`);
  return Buffer.concat([encodeSnapshotHeader(s.meta, crc32c(s.data)), s.data]);
}

/** The snapshot in a file's bytes whose name says `id`, or why it is not usable. */
export function decodeSnapshot(bytes: Buffer, id: OffsetAndEpoch): StoredSnapshot | string {
  if (bytes.length < FIXED_BYTES) return `${bytes.length} bytes, shorter than a header`;
  const version = bytes.readUInt8(4);
  if (bytes.readUInt32BE(0) !== MAGIC || (version !== VERSION && version !== IDS_VERSION)) return 'not a snapshot (magic or version)';
  const count = bytes.readUInt32BE(VOTERS_AT);
  if (version === IDS_VERSION ? count > MAX_SNAPSHOT_VOTERS : count > MAX_VOTERS_RECORD_BYTES) return `voters of ${count} ${version === IDS_VERSION ? 'ids' : 'bytes'}`;
  const votersBytes = version === IDS_VERSION ? 4 * count : count;
  const headerBytes = FIXED_BYTES + votersBytes;
  if (bytes.length < headerBytes) return 'torn header';
  const crcAt = headerBytes - 4;
  if (crc32c(bytes.subarray(0, crcAt)) !== bytes.readUInt32BE(crcAt)) return 'header CRC mismatch';
  const endOffset = readInt64(bytes, 5);
  const epoch = bytes.readInt32BE(13);
  if (endOffset !== id.endOffset || epoch !== id.epoch) return `header says ${endOffset}-${epoch}, the name ${id.endOffset}-${id.epoch}`;
  const votersAt = VOTERS_AT + 4;
  const votersRecord = version === IDS_VERSION ? votersRecordOfIds(bytes, votersAt, count) : bytesView(bytes.subarray(votersAt, votersAt + count));
  if (typeof votersRecord === 'string') return votersRecord;
  if (version === VERSION) {
    try {
      decodeVoters(votersRecord);
    } catch (err) {
      if (err instanceof EntryBatchError) return err.message;
      throw err;
    }
  }
  const size = readInt64(bytes, votersAt + votersBytes);
  if (bytes.length !== headerBytes + size) return `${bytes.length - headerBytes} data bytes, the header says ${size}`;
  const data = bytes.subarray(headerBytes);
  if (crc32c(data) !== bytes.readUInt32BE(crcAt - 4)) return 'data CRC mismatch';
  return { snapshot: { meta: { id: { endOffset, epoch }, votersRecord, size }, data }, dataOffset: headerBytes };
}

/** A version 1 header's voter ids as the VotersRecord they stand for (no endpoints), or why they are none. */
function votersRecordOfIds(bytes: Buffer, at: number, count: number): Uint8Array | string {
  const ids: NodeId[] = [];
  for (let i = 0; i < count; i++) ids.push(bytes.readInt32BE(at + 4 * i));
  try {
    return encodeVoters(ids);
  } catch (err) {
    if (err instanceof RangeError) return `voters ${ids.join(',')}: ${err.message}`;
    throw err;
  }
}
