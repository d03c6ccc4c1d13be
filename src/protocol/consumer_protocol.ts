// The embedded "consumer" protocol: the subscription a member puts in its JoinGroup protocol
// metadata and the assignment the leader hands out through SyncGroup (Kafka's
// ConsumerProtocolSubscription / ConsumerProtocolAssignment). The broker normally passes these
// bytes through untouched; it decodes them to describe groups, to vet a member's topics and for
// our own client. Main thread, or wherever a caller needs it (pure functions, no state).
// Wire format: int16 version, then the classic (non-flexible) encoding of that version.
// Invariants: later versions only append fields, so a payload newer than v3 decodes as v3 and
// its unknown tail is ignored (Kafka does the same); truncated or malformed input throws
// ProtocolError; decoded userData is a view into the input, not a copy.

import { ProtocolError, Reader } from './reader.js';
import { Writer } from './writer.js';
import { defineApi } from './schema.js';
import type { Api, Field } from './schema.js';

export interface ConsumerTopicPartitions {
  topic: string;
  partitions: number[];
}

export interface ConsumerSubscription {
  topics: string[];
  userData: Buffer | null;
  /** v1+ (cooperative rebalancing). */
  ownedPartitions: ConsumerTopicPartitions[];
  /** v2+; -1 when unknown. */
  generationId: number;
  /** v3+. */
  rackId: string | null;
}

export interface ConsumerAssignment {
  assignedPartitions: ConsumerTopicPartitions[];
  userData: Buffer | null;
}

/** Highest version we know; also what we encode unless told otherwise (as Kafka's clients do). */
export const CONSUMER_PROTOCOL_MAX_VERSION = 3;

const topicPartitions: readonly Field[] = [
  { name: 'topic', type: 'string', versions: '0+' },
  { name: 'partitions', type: 'int32', array: true, versions: '0+' },
];

/**
 * defineApi compiles any Field list into per-version codecs; each payload uses the request side
 * and leaves the response side empty.
 */
function payloadCodec<T>(name: string, fields: readonly Field[]): Api<T, Record<string, never>> {
  return defineApi<T, Record<string, never>>({
    apiKey: -1, name, minVersion: 0, maxVersion: CONSUMER_PROTOCOL_MAX_VERSION,
    flexibleVersions: 'none', request: fields, response: [],
  });
}

const subscriptionCodec = payloadCodec<ConsumerSubscription>('ConsumerProtocolSubscription', [
  { name: 'topics', type: 'string', array: true, versions: '0+' },
  { name: 'userData', type: 'bytes', versions: '0+', nullableVersions: '0+', default: null },
  { name: 'ownedPartitions', type: topicPartitions, array: true, versions: '1+' },
  { name: 'generationId', type: 'int32', versions: '2+', default: -1 },
  { name: 'rackId', type: 'string', versions: '3+', nullableVersions: '3+', default: null },
]);

const assignmentCodec = payloadCodec<ConsumerAssignment>('ConsumerProtocolAssignment', [
  { name: 'assignedPartitions', type: topicPartitions, array: true, versions: '0+' },
  { name: 'userData', type: 'bytes', versions: '0+', nullableVersions: '0+', default: null },
]);

function decode<T>(codec: Api<T, Record<string, never>>, b: Uint8Array): T {
  const buf = Buffer.isBuffer(b) ? b : Buffer.from(b.buffer, b.byteOffset, b.byteLength);
  const r = new Reader(buf);
  const version = r.int16();
  if (version < 0) throw new ProtocolError(`${codec.name} version ${version}`);
  return codec.decodeRequest(Math.min(version, CONSUMER_PROTOCOL_MAX_VERSION), r);
}

function encode<T>(codec: Api<T, Record<string, never>>, value: T, version: number): Buffer {
  if (!Number.isInteger(version) || version < 0 || version > CONSUMER_PROTOCOL_MAX_VERSION) {
    throw new RangeError(`${codec.name} v${version} is not supported`);
  }
  const w = new Writer(64);
  w.int16(version);
  codec.encodeRequest(version, value, w);
  return Buffer.concat(w.finish());
}

export function decodeSubscription(b: Uint8Array): ConsumerSubscription {
  return decode(subscriptionCodec, b);
}

export function encodeSubscription(s: ConsumerSubscription, version = CONSUMER_PROTOCOL_MAX_VERSION): Buffer {
  return encode(subscriptionCodec, s, version);
}

export function decodeAssignment(b: Uint8Array): ConsumerAssignment {
  return decode(assignmentCodec, b);
}

export function encodeAssignment(a: ConsumerAssignment, version = CONSUMER_PROTOCOL_MAX_VERSION): Buffer {
  return encode(assignmentCodec, a, version);
}
