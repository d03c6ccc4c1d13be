// The Raft core's log entries as Kafka record batches (magic 2), the form they take on disk in
// the metadata log and inside Fetch responses, and back. Pure functions; any thread.
//
// Layout, as KRaft writes `__cluster_metadata`:
// - a batch's partitionLeaderEpoch is its entries' epoch and its baseOffset the first entry's
//   offset; consecutive `data` entries of one epoch share a batch (up to MAX_ENTRY_BATCH_BYTES),
//   one record per entry whose value is the entry's bytes;
// - each `leaderChange` entry is a control batch of one LEADER_CHANGE record whose value is a
//   LeaderChangeMessage, and each `voters` entry a control batch of one KRAFT_VOTERS record whose
//   value is the entry's bytes (a VotersRecord, see encodeVoters). Control entries never share a
//   batch: Kafka's readers take one control record per control batch.
// Decoding checks every batch's CRC, that offsets are contiguous across records and batches, and
// that control records are well formed; anything else throws EntryBatchError (CORRUPT_MESSAGE).
// Decoded `data` is a view of the input, never a copy: it keeps the input's buffer alive.
import { ErrorCode, KafkaError } from '../../protocol/errors.js';
import {
  CONTROL_KEY_BYTES,
  CONTROL_KEY_VERSION,
  ControlRecordType,
  LeaderChangeMessageSchema,
  VotersRecordSchema,
  encodeControlKey,
  type VoterEndpoint,
  type VotersRecord,
} from '../../protocol/kraft_control.js';
import { ProtocolError, Reader } from '../../protocol/reader.js';
import { BATCH_HEADER_BYTES, BatchField, LOG_OVERHEAD, stampBatch } from '../../protocol/record_batch.js';
import {
  RecordBatchError,
  decodeRecordBatches,
  encodeRecordBatch,
  type ConsumedRecord,
  type DecodedBatch,
  type ProducerRecord,
} from '../../protocol/records.js';
import { ZERO_UUID } from '../../protocol/schema.js';
import { Writer } from '../../protocol/writer.js';
import type { Entry, NodeId } from './types.js';

/** KRaft's MAX_BATCH_SIZE_BYTES: a data batch closes once its entries' bytes reach this. */
export const MAX_ENTRY_BATCH_BYTES = 8 * 1024 * 1024;

/** The KRaft protocol versions a voter advertises in VotersRecord (kraft.version 1: dynamic quorum). */
const KRAFT_VERSION_RANGE = { minSupportedVersion: 0, maxSupportedVersion: 1 } as const;

/** Batches or control records that do not decode as entries: a corrupt log or a hostile peer. */
export class EntryBatchError extends KafkaError {
  constructor(message: string) {
    super(ErrorCode.CORRUPT_MESSAGE, message);
    this.name = 'EntryBatchError';
  }
}

export interface EntryBatchOptions {
  /** Every record's CreateTime (ms); entries carry no time of their own. Default 0. */
  readonly timestamp?: number;
  /** Written into LeaderChangeMessage values: the leader of the entries' epoch (default -1, unknown). */
  readonly leaderId?: NodeId;
  /** Written into LeaderChangeMessage values: the voters of that epoch (default none). */
  readonly voters?: readonly NodeId[];
}

// ---- voters -----------------------------------------------------------------------------------

/** Why `ids` is not a voter set (empty, negative or repeated ids), or null when it is one. */
function voterSetFault(ids: readonly number[]): string | null {
  if (ids.length === 0) return 'a voter set needs at least one voter';
  const seen = new Set<number>();
  for (const id of ids) {
    if (!Number.isInteger(id) || id < 0) return `voter id ${id} is not a node id`;
    if (seen.has(id)) return `voter ${id} appears twice`;
    seen.add(id);
  }
  return null;
}

/** The listeners each voter announced (AddRaftVoter's Listeners, KIP-853), by voter id. */
export type VoterEndpoints = ReadonlyMap<NodeId, readonly VoterEndpoint[]>;

/**
 * A `voters` entry's bytes: a VotersRecord v0 naming each voter with the endpoints `endpoints`
 * holds for it (none for the statically configured ones); no directory ids yet.
 */
export function encodeVoters(voters: readonly NodeId[], endpoints: VoterEndpoints = new Map()): Uint8Array {
  const fault = voterSetFault(voters);
  if (fault !== null) throw new RangeError(fault);
  const record: VotersRecord = {
    version: 0,
    voters: voters.map((voterId) => ({
      voterId, voterUuid: ZERO_UUID, endpoints: (endpoints.get(voterId) ?? []).map((e) => ({ ...e })), kraftVersionFeature: { ...KRAFT_VERSION_RANGE },
    })),
  };
  const w = new Writer(16 + voters.length * 32);
  VotersRecordSchema.encode(0, record, w);
  return bytesView(Buffer.concat(w.finish()));
}

/** The voter ids of a VotersRecord value; throws EntryBatchError if it is not one. */
export function decodeVoters(data: Uint8Array): NodeId[] {
  return decodeVotersRecord(data).voters.map((v) => v.voterId);
}

/** The endpoints each voter of a VotersRecord value carries (voters without any are left out). */
export function decodeVoterEndpoints(data: Uint8Array): Map<NodeId, VoterEndpoint[]> {
  return new Map(decodeVotersRecord(data).voters.filter((v) => v.endpoints.length > 0).map((v) => [v.voterId, v.endpoints]));
}

function decodeVotersRecord(data: Uint8Array): VotersRecord {
  const record = readWhole(data, (r) => VotersRecordSchema.decode(0, r), 'VotersRecord');
  if (record.version !== 0) throw new EntryBatchError(`VotersRecord version ${record.version} is not 0`);
  const fault = voterSetFault(record.voters.map((v) => v.voterId));
  if (fault !== null) throw new EntryBatchError(`VotersRecord: ${fault}`);
  return record;
}

// ---- encoding ---------------------------------------------------------------------------------

/** Entries as record batches, one Buffer per batch, in offset order. `entries` must be contiguous. */
export function encodeEntryBatches(entries: readonly Entry[], options: EntryBatchOptions = {}): Buffer[] {
  const batches: Buffer[] = [];
  let i = 0;
  while (i < entries.length) {
    const first = entries[i] as Entry;
    if (i > 0 && first.offset !== (entries[i - 1] as Entry).offset + 1) {
      throw new RangeError(`entry offsets jump from ${(entries[i - 1] as Entry).offset} to ${first.offset}`);
    }
    if (first.kind !== 'data') {
      batches.push(controlBatch(first, options));
      i++;
      continue;
    }
    let end = i + 1;
    let bytes = first.data.length;
    while (end < entries.length && bytes < MAX_ENTRY_BATCH_BYTES) {
      const next = entries[end] as Entry;
      if (next.kind !== 'data' || next.epoch !== first.epoch || next.offset !== (entries[end - 1] as Entry).offset + 1) break;
      bytes += next.data.length;
      end++;
    }
    batches.push(dataBatch(entries.slice(i, end), options));
    i = end;
  }
  return batches;
}

function dataBatch(entries: readonly Entry[], options: EntryBatchOptions): Buffer {
  const timestamp = options.timestamp ?? 0;
  const records: ProducerRecord[] = entries.map((e) => ({ key: null, value: asBuffer(e.data), timestamp }));
  return stamped(encodeRecordBatch(records), entries[0] as Entry);
}

function controlBatch(entry: Entry, options: EntryBatchOptions): Buffer {
  const value = entry.kind === 'leaderChange' ? leaderChangeValue(options) : voterValue(entry);
  const type = entry.kind === 'leaderChange' ? ControlRecordType.leaderChange : ControlRecordType.kraftVoters;
  const record: ProducerRecord = { key: encodeControlKey(type), value, timestamp: options.timestamp ?? 0 };
  return stamped(encodeRecordBatch([record], { control: true }), entry);
}

function leaderChangeValue(options: EntryBatchOptions): Buffer {
  const w = new Writer(32);
  LeaderChangeMessageSchema.encode(0, {
    version: 0,
    leaderId: options.leaderId ?? -1,
    voters: (options.voters ?? []).map((voterId) => ({ voterId })),
    grantingVoters: [],
  }, w);
  return Buffer.concat(w.finish());
}

function voterValue(entry: Entry): Buffer {
  decodeVoters(entry.data);
  return asBuffer(entry.data);
}

function stamped(batch: Buffer, first: Entry): Buffer {
  stampBatch(batch, first.offset, first.epoch);
  return batch;
}

// ---- decoding ---------------------------------------------------------------------------------

/**
 * The entries of concatenated record batches (a metadata log's bytes or a Fetch response's
 * records). The bytes must hold whole batches only; an empty input gives no entries.
 */
export function decodeEntryBatches(data: Uint8Array): Entry[] {
  const buf = asBuffer(data);
  checkWholeBatches(buf);
  let batches: DecodedBatch[];
  try {
    batches = decodeRecordBatches(buf);
  } catch (err) {
    if (err instanceof RecordBatchError) throw new EntryBatchError(err.message);
    throw err;
  }
  const entries: Entry[] = [];
  for (const batch of batches) {
    const expected = entries.length === 0 ? batch.baseOffset : (entries[entries.length - 1] as Entry).offset + 1;
    if (batch.baseOffset !== expected) throw new EntryBatchError(`batch at offset ${batch.baseOffset} does not follow offset ${expected - 1}`);
    if (batch.partitionLeaderEpoch < 0) throw new EntryBatchError(`batch at offset ${batch.baseOffset} has no leader epoch`);
    if (batch.records.length === 0 || batch.lastOffset !== batch.baseOffset + batch.records.length - 1) {
      throw new EntryBatchError(`batch at offset ${batch.baseOffset} holds ${batch.records.length} records up to offset ${batch.lastOffset}`);
    }
    batch.records.forEach((record, i) => {
      if (record.offset !== batch.baseOffset + i) throw new EntryBatchError(`record at offset ${record.offset} in slot ${i} of batch ${batch.baseOffset}`);
      entries.push(batch.control ? controlEntry(batch, record) : dataEntry(batch, record));
    });
  }
  return entries;
}

/** Batch lengths must tile the input exactly: a cut-off batch is corruption here, not a fetch limit. */
function checkWholeBatches(buf: Buffer): void {
  let pos = 0;
  while (pos < buf.length) {
    if (buf.length - pos < BATCH_HEADER_BYTES) throw new EntryBatchError(`${buf.length - pos} bytes at ${pos} are shorter than a batch header`);
    const size = buf.readInt32BE(pos + BatchField.batchLength) + LOG_OVERHEAD;
    if (size < BATCH_HEADER_BYTES || size > buf.length - pos) throw new EntryBatchError(`batch at byte ${pos} claims ${size} bytes of ${buf.length - pos}`);
    pos += size;
  }
}

function dataEntry(batch: DecodedBatch, record: ConsumedRecord): Entry {
  if (record.value === null) throw new EntryBatchError(`record at offset ${record.offset} has no value`);
  return { offset: record.offset, epoch: batch.partitionLeaderEpoch, kind: 'data', data: bytesView(record.value) };
}

function controlEntry(batch: DecodedBatch, record: ConsumedRecord): Entry {
  if (batch.records.length !== 1) throw new EntryBatchError(`control batch at offset ${batch.baseOffset} holds ${batch.records.length} records`);
  const key = record.key;
  if (key === null || key.length !== CONTROL_KEY_BYTES || key.readInt16BE(0) !== CONTROL_KEY_VERSION) {
    throw new EntryBatchError(`control record at offset ${record.offset} has a malformed key`);
  }
  if (record.value === null) throw new EntryBatchError(`control record at offset ${record.offset} has no value`);
  const type = key.readInt16BE(2);
  const base = { offset: record.offset, epoch: batch.partitionLeaderEpoch };
  if (type === ControlRecordType.leaderChange) {
    const message = readWhole(record.value, (r) => LeaderChangeMessageSchema.decode(0, r), 'LeaderChangeMessage');
    if (message.version !== 0) throw new EntryBatchError(`LeaderChangeMessage version ${message.version} is not 0`);
    return { ...base, kind: 'leaderChange', data: new Uint8Array(0) };
  }
  if (type === ControlRecordType.kraftVoters) {
    decodeVoters(record.value);
    return { ...base, kind: 'voters', data: bytesView(record.value) };
  }
  throw new EntryBatchError(`control record type ${type} at offset ${record.offset} is not a Raft entry`);
}

function readWhole<T>(data: Uint8Array, read: (r: Reader) => T, what: string): T {
  const r = new Reader(asBuffer(data));
  let value: T;
  try {
    value = read(r);
  } catch (err) {
    if (err instanceof ProtocolError) throw new EntryBatchError(`${what}: ${err.reason}`);
    throw err;
  }
  if (r.remaining() !== 0) throw new EntryBatchError(`${what}: ${r.remaining()} bytes after its end`);
  return value;
}

function asBuffer(data: Uint8Array): Buffer {
  return Buffer.isBuffer(data) ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength);
}

/** A plain Uint8Array view (entries hold Uint8Array, so equal entries compare equal however decoded). */
export function bytesView(buf: Buffer): Uint8Array {
  return new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
}
