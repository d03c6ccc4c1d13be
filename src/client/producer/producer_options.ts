// The producer's options: what a caller may set, Kafka-like defaults, and the checks Java's
// producer makes up front (idempotence needs acks=all; only codecs this client carries). Also
// turns a caller's message (Buffer | Uint8Array | string fields) into the accumulator's record.
// Pure; runs on the caller's thread.

import { ErrorCode, KafkaError } from '../../protocol/errors.js';
import type { ClusterOptions } from '../cluster.js';
import { CompressionCodec } from '../../protocol/records.js';
import type { ProducerRecord, RecordHeader } from '../../protocol/records.js';
import { OnFull } from './accumulator.js';

export type Acks = 0 | 1 | -1 | 'all';
export type Compression = 'none' | 'gzip';
export type Bytes = Buffer | Uint8Array | string;

export interface ProducerOptions extends ClusterOptions {
  /** Replicas that must have the records before the broker answers; default 'all' (-1). 0: no answer at all. */
  acks?: Acks;
  /** Producer id + sequences so retries never duplicate; default true with acks all, false otherwise. Needs acks all. */
  idempotent?: boolean;
  /** Default 'none'. snappy, lz4 and zstd need codecs this client does not carry. */
  compression?: Compression;
  /** How long a batch waits for more records; default 5 ms. */
  lingerMs?: number;
  /** A partition's batch is sent once it holds this many (uncompressed) bytes; default 16 KiB. */
  batchSize?: number;
  /** Bound on all records waiting or in flight; default 32 MiB. */
  bufferMemory?: number;
  /** When bufferMemory is used up: 'wait' (default, at most maxBlockMs) or 'error' (reject at once). */
  onBufferFull?: OnFull;
  /** From send to failure, retries included; default 120 s. */
  deliveryTimeoutMs?: number;
  /** Before a failed batch is sent again; default 100 ms. */
  retryBackoffMs?: number;
  /** Produce requests awaiting an answer per broker; default 5. */
  maxInFlight?: number;
  /** Bound on one Produce request's batches; default 1 MiB. */
  maxRequestSize?: number;
  /** How long send waits for topic metadata or buffer space; default 60 s. */
  maxBlockMs?: number;
}

export interface ResolvedProducerOptions {
  readonly acks: number;
  readonly idempotent: boolean;
  readonly compression: CompressionCodec;
  readonly lingerMs: number;
  readonly batchSize: number;
  readonly bufferMemory: number;
  readonly onBufferFull: OnFull;
  readonly deliveryTimeoutMs: number;
  readonly requestTimeoutMs: number;
  readonly retryBackoffMs: number;
  readonly maxInFlight: number;
  readonly maxRequestSize: number;
  readonly maxBlockMs: number;
}

function positive(name: string, value: number | undefined, fallback: number, min = 1): number {
  const v = value ?? fallback;
  if (!Number.isFinite(v) || v < min) throw new RangeError(`${name} must be a number >= ${min} (got ${value})`);
  return v;
}

function resolveAcks(acks: Acks | undefined): number {
  if (acks === undefined || acks === 'all' || acks === -1) return -1;
  if (acks === 0 || acks === 1) return acks;
  throw new TypeError(`acks must be 0, 1, -1 or 'all' (got ${String(acks)})`);
}

function resolveCompression(c: string | undefined): CompressionCodec {
  if (c === undefined || c === 'none') return CompressionCodec.none;
  if (c === 'gzip') return CompressionCodec.gzip;
  throw new TypeError(`compression '${c}' is not supported: this client carries only 'none' and 'gzip'`);
}

export function resolveProducerOptions(o: ProducerOptions): ResolvedProducerOptions {
  const acks = resolveAcks(o.acks);
  // As Java: idempotence left unset follows acks; asked for explicitly, it needs acks=all.
  if (o.idempotent === true && acks !== -1) {
    throw new TypeError(`idempotent: true requires acks 'all' (-1), got acks ${acks}; set idempotent: false to use acks ${acks}`);
  }
  const idempotent = o.idempotent ?? acks === -1;
  const maxInFlight = positive('maxInFlight', o.maxInFlight, 5);
  const onBufferFull = o.onBufferFull ?? OnFull.wait;
  if (onBufferFull !== OnFull.wait && onBufferFull !== OnFull.error) throw new TypeError(`onBufferFull must be 'wait' or 'error'`);
  return {
    acks,
    idempotent,
    compression: resolveCompression(o.compression),
    lingerMs: positive('lingerMs', o.lingerMs, 5, 0),
    batchSize: positive('batchSize', o.batchSize, 16 * 1024),
    bufferMemory: positive('bufferMemory', o.bufferMemory, 32 * 1024 * 1024),
    onBufferFull,
    deliveryTimeoutMs: positive('deliveryTimeoutMs', o.deliveryTimeoutMs, 120_000),
    requestTimeoutMs: positive('requestTimeoutMs', o.requestTimeoutMs, 30_000),
    retryBackoffMs: positive('retryBackoffMs', o.retryBackoffMs, 100, 0),
    maxInFlight,
    maxRequestSize: positive('maxRequestSize', o.maxRequestSize, 1024 * 1024),
    maxBlockMs: positive('maxBlockMs', o.maxBlockMs, 60_000, 0),
  };
}

/** What send accepts. Buffers are kept by reference until delivered: do not reuse them before. */
export interface ProducerMessage {
  key?: Bytes | null;
  value: Bytes | null;
  /** An object (header order = key order) or a list (repeated keys allowed). */
  headers?: Readonly<Record<string, Bytes>> | readonly { readonly key: string; readonly value: Bytes | null }[];
  /** Default: the key's murmur2 partition, or a sticky one for null keys. */
  partition?: number;
  /** CreateTime in ms; default now. */
  timestamp?: number;
}

function toBuffer(b: Bytes | null | undefined): Buffer | null {
  if (b === null || b === undefined) return null;
  if (typeof b === 'string') return Buffer.from(b, 'utf8');
  return Buffer.isBuffer(b) ? b : Buffer.from(b.buffer, b.byteOffset, b.byteLength);
}

function toHeaders(h: NonNullable<ProducerMessage['headers']>): RecordHeader[] {
  if (Array.isArray(h)) return (h as readonly { key: string; value: Bytes | null }[]).map((x) => ({ key: x.key, value: toBuffer(x.value) }));
  return Object.entries(h as Readonly<Record<string, Bytes>>).map(([key, value]) => ({ key, value: toBuffer(value) }));
}

export function toProducerRecord(m: ProducerMessage, now: number): ProducerRecord {
  if (m === null || typeof m !== 'object') throw new TypeError('a message is an object with at least a value');
  const timestamp = m.timestamp ?? now;
  if (!Number.isSafeInteger(timestamp)) throw new KafkaError(ErrorCode.INVALID_TIMESTAMP, `timestamp ${timestamp} is not an integer`);
  const key = toBuffer(m.key);
  const value = toBuffer(m.value);
  return m.headers === undefined ? { key, value, timestamp } : { key, value, headers: toHeaders(m.headers), timestamp };
}
