// Byte form of the coordinator's GroupRecords in the `__consumer_offsets` log: one Kafka record
// per GroupRecord, keyed so compaction keeps the latest per key (a null value is a tombstone).
// Keys and offset values are fixed binary layouts; group values (classic and KIP-848) are V8
// serialized, which keeps Uint8Arrays and Maps intact and which newer V8 versions still read.
// Runs on the shard that owns the offsets partition.
import { deserialize, serialize } from 'node:v8';
import { Reader } from '../../protocol/reader.js';
import { Writer } from '../../protocol/writer.js';
import type { GroupRecord } from './group_api.js';

const KeyKind = { offset: 1, classicGroup: 2, consumerGroup: 3 } as const;
const OFFSET_VALUE_VERSION = 0;
const GROUP_VALUE_VERSION = 0;

export interface RecordBytes {
  key: Buffer;
  value: Buffer | null;
}

function concat(w: Writer): Buffer {
  return Buffer.concat(w.finish());
}

export function encodeGroupRecord(r: GroupRecord): RecordBytes {
  const key = new Writer(64);
  key.int16(KeyKind[r.kind]);
  key.string(r.groupId);
  if (r.kind === 'offset') {
    key.string(r.topic);
    key.int32(r.partition);
  }
  if (r.value === null) return { key: concat(key), value: null };
  if (r.kind !== 'offset') {
    const body = serialize(r.value);
    const value = Buffer.allocUnsafe(body.length + 1);
    value[0] = GROUP_VALUE_VERSION;
    body.copy(value, 1);
    return { key: concat(key), value };
  }
  const v = new Writer(64);
  v.int16(OFFSET_VALUE_VERSION);
  v.int64(r.value.offset);
  v.int32(r.value.leaderEpoch);
  v.nullableString(r.value.metadata);
  v.int64(r.value.commitTimestamp);
  v.int64(r.value.expireTimestamp);
  return { key: concat(key), value: concat(v) };
}

/** Decodes one record; throws ProtocolError (or Error for an unknown layout) on bytes it cannot read. */
export function decodeGroupRecord(key: Buffer, value: Buffer | null): GroupRecord {
  const k = new Reader(key);
  const kind = k.int16();
  const groupId = k.string();
  if (kind === KeyKind.offset) {
    const topic = k.string();
    const partition = k.int32();
    if (value === null) return { kind: 'offset', groupId, topic, partition, value: null };
    const v = new Reader(value);
    const version = v.int16();
    if (version !== OFFSET_VALUE_VERSION) throw new Error(`unknown offset value version ${version}`);
    return {
      kind: 'offset', groupId, topic, partition,
      value: { offset: v.int64(), leaderEpoch: v.int32(), metadata: v.nullableString(), commitTimestamp: v.int64(), expireTimestamp: v.int64() },
    };
  }
  if (kind !== KeyKind.classicGroup && kind !== KeyKind.consumerGroup) throw new Error(`unknown group record key kind ${kind}`);
  let decoded: unknown = null;
  if (value !== null) {
    if (value[0] !== GROUP_VALUE_VERSION) throw new Error(`unknown group value version ${value[0]}`);
    // Byte arrays come back as views of the input: a private copy keeps them from pinning (or
    // aliasing) the caller's larger buffer.
    decoded = deserialize(Buffer.from(value.subarray(1)));
  }
  if (kind === KeyKind.consumerGroup) return { kind: 'consumerGroup', groupId, value: decoded };
  return { kind: 'classicGroup', groupId, value: decoded as Extract<GroupRecord, { kind: 'classicGroup' }>['value'] };
}
