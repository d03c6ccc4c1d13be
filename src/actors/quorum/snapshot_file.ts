// The metadata quorum's snapshot file format: `<endOffset, 20 digits>-<epoch, 10 digits>.checkpoint`
// (KRaft's naming, KIP-630) holding a header (snapshot id, voters, data size, CRC-32C of the data,
// CRC-32C of the header) then the state machine's bytes. Pure encode/decode; any thread.
// Invariant: decode accepts exactly what encode produces for the id in the file's name; anything
// else (torn, flipped, renamed) is refused with the reason.
import { crc32c, readInt64, writeInt64 } from '../../protocol/record_batch.js';
import type { NodeId, OffsetAndEpoch, Snapshot, SnapshotMeta } from '../../coordinator/raft/types.js';

export const SNAPSHOT_SUFFIX = '.checkpoint';
/** A snapshot being written: renamed to its final name only once complete and fsync'd. */
export const PART_SUFFIX = '.checkpoint.part';

const NAME = /^(\d{20})-(\d{10})\.checkpoint$/;
// Layout: magic u32 "SLSN", version u8, endOffset i64, epoch i32, voter count u32, voters i32 each,
// data size i64, data CRC-32C u32, header CRC-32C u32 (of every header byte before it).
const MAGIC = 0x534c534e;
const VERSION = 1;
const FIXED_BYTES = 4 + 1 + 8 + 4 + 4 + 8 + 4 + 4;
/** Far above any real quorum; a larger count marks a damaged header. */
export const MAX_SNAPSHOT_VOTERS = 1024;

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

export function snapshotHeaderBytes(voters: number): number {
  return FIXED_BYTES + 4 * voters;
}

export function encodeSnapshotHeader(meta: SnapshotMeta, dataCrc: number): Buffer {
  if (meta.voters.length > MAX_SNAPSHOT_VOTERS) throw new RangeError(`snapshot with ${meta.voters.length} voters (at most ${MAX_SNAPSHOT_VOTERS})`);
  const buf = Buffer.alloc(snapshotHeaderBytes(meta.voters.length));
  let pos = buf.writeUInt32BE(MAGIC, 0);
  pos = buf.writeUInt8(VERSION, pos);
  writeInt64(buf, pos, meta.id.endOffset);
  pos = buf.writeInt32BE(meta.id.epoch, pos + 8);
  pos = buf.writeUInt32BE(meta.voters.length, pos);
  for (const v of meta.voters) pos = buf.writeInt32BE(v, pos);
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
export function decodeSnapshot(bytes: Buffer, id: OffsetAndEpoch): Snapshot | string {
  if (bytes.length < FIXED_BYTES) return `${bytes.length} bytes, shorter than a header`;
  if (bytes.readUInt32BE(0) !== MAGIC || bytes.readUInt8(4) !== VERSION) return 'not a snapshot (magic or version)';
  const count = bytes.readUInt32BE(17);
  if (count > MAX_SNAPSHOT_VOTERS) return `voter count ${count}`;
  const headerBytes = snapshotHeaderBytes(count);
  if (bytes.length < headerBytes) return 'torn header';
  const crcAt = headerBytes - 4;
  if (crc32c(bytes.subarray(0, crcAt)) !== bytes.readUInt32BE(crcAt)) return 'header CRC mismatch';
  const endOffset = readInt64(bytes, 5);
  const epoch = bytes.readInt32BE(13);
  if (endOffset !== id.endOffset || epoch !== id.epoch) return `header says ${endOffset}-${epoch}, the name ${id.endOffset}-${id.epoch}`;
  const voters: NodeId[] = [];
  for (let i = 0; i < count; i++) voters.push(bytes.readInt32BE(21 + 4 * i));
  const size = readInt64(bytes, 21 + 4 * count);
  if (bytes.length !== headerBytes + size) return `${bytes.length - headerBytes} data bytes, the header says ${size}`;
  const data = bytes.subarray(headerBytes);
  if (crc32c(data) !== bytes.readUInt32BE(crcAt - 4)) return 'data CRC mismatch';
  return { meta: { id: { endOffset, epoch }, voters, size }, data };
}
