// The producer's RecordAccumulator: records wait here in per-partition batches until a batch is
// full (`batchBytes`), has lingered `lingerMs`, or is flushed; `drain` then hands ready batches
// to the send loop grouped by leader node, one batch per partition per request and at most
// `maxRequestBytes` per node. Runs on the producer's thread; pure apart from the space-wait
// promises (time comes in as `now`, leaders through a lookup).
// Invariants:
// - Memory: buffered + reserved bytes never exceed `bufferBytes` (sizes are upper-bound
//   estimates of the uncompressed batch). When full, `append` answers 'full' and the caller
//   waits (`waitForSpace`, FIFO, at most `maxWaiters` waiters) or fails fast; memory is freed
//   when a batch is completed, failed or expired, not when it is drained (it may be retried).
// - Order: a partition's batches leave in append order; a batch that failed retriably goes back
//   to the head, in drain order among other retried batches, and is not re-sent while a batch
//   drained before it is still in flight. At most `maxInflightPerPartition` batches per
//   partition are in flight, all to one broker: after a leader change nothing drains to the new
//   leader until every batch sent to the old one is answered, so the new leader sees the
//   partition's sequences from the lowest unacknowledged one on, never a later batch first.
// - Idempotence: a batch gets its base sequence, producer id and epoch at its first drain and
//   keeps them through retries; sequences per partition are contiguous (wrapping at 2^31-1 as
//   Kafka does). A batch lost after getting a sequence (expired, failed) leaves a gap, so
//   `needsProducerIdReset` turns true and nothing drains until `setProducerId` (after the batches
//   still in flight are answered) starts a new epoch.
// - Bounded state: at most `maxPartitions` partition queues.
//
// Use in the send loop:
//   r = acc.append(topic, p, record, now)      // or: await acc.appendOrWait(..., clock, signal)
//   if r.status === 'full': onFull 'error' -> fail send; 'wait' -> await acc.waitForSpace(r.bytes)
//   loop: acc.expire(now); for [node, batches] of acc.drain(now, leaderOf) -> encode + Produce;
//         per partition answer: acc.complete(b, baseOffset) | acc.retry(b, now) | acc.fail(b, err);
//         sleep min(acc.timeUntilReady(now, leaderOf), next answer, next append that is `ready`).

import { BATCH_HEADER_BYTES } from '../../protocol/record_batch.js';
import { ErrorCode, KafkaError } from '../../protocol/errors.js';
import { varintSize } from '../../protocol/records.js';
import type { ProducerRecord } from '../../protocol/records.js';
import { BatchDelivery } from './delivery.js';
import type { RecordMetadata } from './delivery.js';

export const OnFull = { wait: 'wait', error: 'error' } as const;
export type OnFull = (typeof OnFull)[keyof typeof OnFull];

export interface AccumulatorOptions {
  /** How long a batch that is not full waits for more records; default 5 ms. */
  readonly lingerMs?: number;
  /** A batch is full at this many (estimated, uncompressed) bytes; default 16 KiB. */
  readonly batchBytes?: number;
  /** Bound on all buffered batches; default 32 MiB. */
  readonly bufferBytes?: number;
  /** Bound on the batches drained for one node at once; default 1 MiB. */
  readonly maxRequestBytes?: number;
  /** From batch creation to failing its records; default 120 s. */
  readonly deliveryTimeoutMs?: number;
  /** Delay before a retried batch is drained again; default 100 ms. */
  readonly retryBackoffMs?: number;
  /** Assign producer id, epoch and sequences; default true. */
  readonly idempotent?: boolean;
  /** Default 5, which is also the most idempotence allows. */
  readonly maxInflightPerPartition?: number;
  /** What appendOrWait does when the buffer is full; default 'wait'. */
  readonly onFull?: OnFull;
  /** Callers waiting for space at once; default 1024. */
  readonly maxWaiters?: number;
  /** Distinct partitions tracked; default 100,000. */
  readonly maxPartitions?: number;
}

/** Node id of the partition's leader, or -1 when unknown. */
export type LeaderLookup = (topic: string, partition: number) => number;

/** The buffer is full and the caller asked to fail fast (or too many callers already wait). */
export class BufferFullError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BufferFullError';
  }
}

/** Space reserved for one caller by waitForSpace; spend it with append (or releaseGrant). */
export class SpaceGrant {
  spent = false;
  constructor(readonly bytes: number) {}
}

export interface Appended {
  readonly status: 'appended';
  /** A batch of this partition can be drained now (full, or closed by this record). */
  readonly ready: boolean;
  /** This record started a new batch. */
  readonly newBatch: boolean;
  readonly delivery: Promise<RecordMetadata>;
}

export interface BufferFull {
  readonly status: 'full';
  /** Worst-case bytes the record needs: pass to waitForSpace. */
  readonly bytes: number;
}

export type AppendResult = Appended | BufferFull;

/** One partition's batch. Its fields belong to the accumulator; the send loop only reads them. */
export class ProducerBatch {
  readonly records: ProducerRecord[] = [];
  readonly delivery: BatchDelivery;
  /** Estimated encoded size, header included; this many bytes are charged to the buffer. */
  bytes = BATCH_HEADER_BYTES;
  /** No more records go in (drained once, flushed, or a newer batch exists). */
  closed = false;
  baseSequence = -1;
  producerId = -1;
  producerEpoch = -1;
  attempts = 0;
  /** Not drained before this time (retry backoff). */
  retryAt = 0;
  /** Position in its partition's drain order, -1 until first drained. */
  order = -1;
  /** Node id of the broker it was last drained to, -1 until first drained. */
  node = -1;

  constructor(readonly topic: string, readonly partition: number, readonly createdAt: number, deliveryTimeoutMs: number) {
    this.delivery = new BatchDelivery(topic, partition, createdAt, deliveryTimeoutMs);
  }
}

class PartitionQueue {
  /** Oldest first; retried batches sit at the head. */
  readonly queued: ProducerBatch[] = [];
  /** Sorted by drain order. */
  readonly inflight: ProducerBatch[] = [];
  nextSequence = 0;
  nextOrder = 0;
  constructor(readonly topic: string, readonly partition: number) {}
}

interface Waiter {
  readonly bytes: number;
  readonly resolve: (grant: SpaceGrant) => void;
  readonly reject: (err: unknown) => void;
  readonly detach: () => void;
}

const INT32_MAX = 0x7fffffff;
/** A record's length prefix, attributes, timestamp delta and offset delta at their widest. */
const RECORD_FIXED_BYTES = 5 + 1 + 10 + 5;

/** A known leader, and the one this partition's in-flight batches (if any) went to. */
function mayDrainTo(q: PartitionQueue, leader: number): boolean {
  return leader >= 0 && (q.inflight[0]?.node ?? leader) === leader;
}

function nullableBytes(b: Uint8Array | null): number {
  return b === null ? 1 : varintSize(b.length) + b.length;
}

/** Upper bound of a record's encoded size inside a batch, before compression. */
export function estimateRecordBytes(r: ProducerRecord): number {
  let bytes = RECORD_FIXED_BYTES + nullableBytes(r.key) + nullableBytes(r.value);
  const headers = r.headers;
  if (headers === undefined) return bytes + 1;
  bytes += varintSize(headers.length);
  for (const h of headers) {
    const keyBytes = Buffer.byteLength(h.key, 'utf8');
    bytes += varintSize(keyBytes) + keyBytes + nullableBytes(h.value);
  }
  return bytes;
}

export class RecordAccumulator {
  readonly onFull: OnFull;
  private readonly lingerMs: number;
  private readonly batchBytes: number;
  private readonly bufferBytes: number;
  private readonly maxRequestBytes: number;
  private readonly deliveryTimeoutMs: number;
  private readonly retryBackoffMs: number;
  private readonly idempotent: boolean;
  private readonly maxInflight: number;
  private readonly maxWaiters: number;
  private readonly maxPartitions: number;

  private readonly byTopic = new Map<string, Map<number, PartitionQueue>>();
  private readonly queues: PartitionQueue[] = [];
  private readonly waiters: Waiter[] = [];
  private usedBytes = 0;
  private reservedBytes = 0;
  private drainStart = 0;
  private producerId = -1;
  private producerEpoch = -1;
  private sequenceGap = false;
  private closedWith: Error | null = null;

  constructor(options: AccumulatorOptions = {}) {
    this.lingerMs = options.lingerMs ?? 5;
    this.batchBytes = options.batchBytes ?? 16 * 1024;
    this.bufferBytes = options.bufferBytes ?? 32 * 1024 * 1024;
    this.maxRequestBytes = options.maxRequestBytes ?? 1024 * 1024;
    this.deliveryTimeoutMs = options.deliveryTimeoutMs ?? 120_000;
    this.retryBackoffMs = options.retryBackoffMs ?? 100;
    this.idempotent = options.idempotent ?? true;
    this.maxInflight = options.maxInflightPerPartition ?? 5;
    this.onFull = options.onFull ?? OnFull.wait;
    this.maxWaiters = options.maxWaiters ?? 1024;
    this.maxPartitions = options.maxPartitions ?? 100_000;
    if (this.maxInflight < 1 || (this.idempotent && this.maxInflight > 5)) {
      throw new RangeError(`maxInflightPerPartition ${this.maxInflight} must be 1..${this.idempotent ? 5 : 'n'}`);
    }
  }

  /** Bytes charged to the buffer by queued and in-flight batches. */
  get bufferedBytes(): number {
    return this.usedBytes;
  }

  /** Bytes promised to waiters that have not appended yet. */
  get reservedSpace(): number {
    return this.reservedBytes;
  }

  /** Callers waiting for buffer space. */
  get waiting(): number {
    return this.waiters.length;
  }

  /** True after a sequenced batch was lost: the next sequences would not follow on. */
  get needsProducerIdReset(): boolean {
    return this.sequenceGap;
  }

  /**
   * Adds a record to its partition's open batch (or a new one). Throws KafkaError
   * MESSAGE_TOO_LARGE for a record that could never fit a request or the buffer. With a grant
   * from waitForSpace the record uses the grant's reservation and never queues behind waiters.
   */
  append(topic: string, partition: number, record: ProducerRecord, now: number, grant?: SpaceGrant): AppendResult {
    if (this.closedWith !== null) throw this.closedWith;
    const recordBytes = estimateRecordBytes(record);
    const worst = recordBytes + BATCH_HEADER_BYTES;
    if (worst > this.maxRequestBytes || worst > this.bufferBytes) {
      throw new KafkaError(ErrorCode.MESSAGE_TOO_LARGE,
        `record of about ${worst} bytes exceeds maxRequestBytes ${this.maxRequestBytes} or bufferBytes ${this.bufferBytes}`);
    }
    if (grant !== undefined) this.spend(grant);
    else if (this.waiters.length > 0) return { status: 'full', bytes: worst };
    const q = this.queueFor(topic, partition);
    const last = q.queued[q.queued.length - 1];
    const fits = last !== undefined && !last.closed && last.bytes + recordBytes <= this.batchBytes;
    const need = fits ? recordBytes : worst;
    if (this.usedBytes + this.reservedBytes + need > this.bufferBytes) {
      // A spent grant's reservation is free again: it may let a waiter through.
      if (grant !== undefined) this.wakeWaiters();
      return { status: 'full', bytes: worst };
    }
    let batch = last as ProducerBatch;
    if (!fits) {
      if (last !== undefined) last.closed = true;
      batch = new ProducerBatch(topic, partition, now, this.deliveryTimeoutMs);
      q.queued.push(batch);
    }
    batch.records.push(record);
    batch.bytes += recordBytes;
    this.usedBytes += need;
    const ready = q.queued.length > 1 || batch.bytes >= this.batchBytes;
    return { status: 'appended', ready, newBatch: !fits, delivery: batch.delivery.track() };
  }

  /** append, applying `onFull`: waits for space (until `signal` aborts) or throws BufferFullError. */
  async appendOrWait(topic: string, partition: number, record: ProducerRecord, clock: () => number, signal?: AbortSignal): Promise<Appended> {
    let grant: SpaceGrant | undefined;
    for (;;) {
      const r = this.append(topic, partition, record, clock(), grant);
      if (r.status === 'appended') return r;
      if (this.onFull === OnFull.error) {
        throw new BufferFullError(`producer buffer full (${this.usedBytes} of ${this.bufferBytes} bytes)`);
      }
      grant = await this.waitForSpace(r.bytes, signal);
    }
  }

  /**
   * Resolves, in FIFO order, once `bytes` fit in the buffer; the space is then reserved for the
   * caller until it appends with the grant (or calls releaseGrant). Rejects with BufferFullError
   * when `maxWaiters` callers already wait, with signal.reason on abort, and with the close
   * error if the accumulator is aborted.
   */
  waitForSpace(bytes: number, signal?: AbortSignal): Promise<SpaceGrant> {
    if (this.closedWith !== null) return Promise.reject(this.closedWith);
    if (bytes > this.bufferBytes) return Promise.reject(new RangeError(`${bytes} bytes can never fit bufferBytes ${this.bufferBytes}`));
    if (signal?.aborted === true) return Promise.reject(signal.reason);
    if (this.waiters.length === 0 && this.free() >= bytes) return Promise.resolve(this.reserve(bytes));
    if (this.waiters.length >= this.maxWaiters) {
      return Promise.reject(new BufferFullError(`${this.waiters.length} callers already wait for buffer space`));
    }
    return new Promise<SpaceGrant>((resolve, reject) => {
      const onAbort = (): void => {
        const i = this.waiters.indexOf(waiter);
        if (i >= 0) this.waiters.splice(i, 1);
        reject(signal?.reason);
        this.wakeWaiters();
      };
      const waiter: Waiter = { bytes, resolve, reject, detach: () => signal?.removeEventListener('abort', onAbort) };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiters.push(waiter);
    });
  }

  /** Gives back a grant's reservation unspent. */
  releaseGrant(grant: SpaceGrant): void {
    this.spend(grant);
    this.wakeWaiters();
  }

  /** Makes every batch queued now ready regardless of linger. */
  flush(): void {
    for (const q of this.queues) for (const b of q.queued) b.closed = true;
  }

  /** Starts a producer epoch: sequences restart at 0. Only with nothing in flight. */
  setProducerId(producerId: number, producerEpoch: number): void {
    for (const q of this.queues) {
      if (q.inflight.length > 0) throw new Error(`cannot change producer id with batches in flight for ${q.topic}-${q.partition}`);
    }
    this.producerId = producerId;
    this.producerEpoch = producerEpoch;
    this.sequenceGap = false;
    for (const q of this.queues) {
      q.nextSequence = 0;
      for (const b of q.queued) {
        b.baseSequence = -1;
        b.producerId = -1;
        b.producerEpoch = -1;
      }
    }
  }

  /**
   * Takes the batches that may be sent now, grouped by leader node id: at most one per
   * partition, at most `maxRequestBytes` per node (a lone batch always goes). Assigns drain
   * order and, when idempotent, sequences. Nothing drains while an idempotent producer has no
   * id or needs a new one (needsProducerIdReset). Partitions are visited from a rotating start so none starves under the size cap.
   */
  drain(now: number, leaderOf: LeaderLookup): Map<number, ProducerBatch[]> {
    const out = new Map<number, ProducerBatch[]>();
    const n = this.queues.length;
    if (n === 0 || this.sequencesBlocked()) return out;
    const sizes = new Map<number, number>();
    for (let i = 0; i < n; i++) {
      const q = this.queues[(this.drainStart + i) % n] as PartitionQueue;
      if (this.readyDelay(q, now) !== 0) continue;
      const leader = leaderOf(q.topic, q.partition);
      if (!mayDrainTo(q, leader)) continue;
      const batch = q.queued[0] as ProducerBatch;
      const size = sizes.get(leader) ?? 0;
      if (size > 0 && size + batch.bytes > this.maxRequestBytes) continue;
      sizes.set(leader, size + batch.bytes);
      this.send(q, batch, leader);
      const list = out.get(leader);
      if (list === undefined) out.set(leader, [batch]);
      else list.push(batch);
    }
    this.drainStart = (this.drainStart + 1) % n;
    return out;
  }

  /** Ms until some batch with a known leader may drain (0: now; Infinity: nothing to wait for). */
  timeUntilReady(now: number, leaderOf: LeaderLookup): number {
    if (this.sequencesBlocked()) return Infinity;
    let best = Infinity;
    for (const q of this.queues) {
      const delay = this.readyDelay(q, now);
      if (delay < best && mayDrainTo(q, leaderOf(q.topic, q.partition))) best = delay;
    }
    return best;
  }

  /** The broker stored `batch` at `baseOffset` (-1 for acks=0). False if it was no longer in flight. */
  complete(batch: ProducerBatch, baseOffset: number): boolean {
    if (!this.land(batch)) return false;
    batch.delivery.resolve(baseOffset);
    return true;
  }

  /** `batch` failed for good: its records reject with `err`. False if it was no longer in flight. */
  fail(batch: ProducerBatch, err: KafkaError): boolean {
    if (!this.land(batch)) return false;
    if (this.idempotent && batch.baseSequence >= 0) this.sequenceGap = true;
    batch.delivery.reject(err);
    return true;
  }

  /**
   * `batch` failed retriably: back to its partition's head, drained again after `backoffMs`
   * (0 when the answer named a new leader to try at once).
   */
  retry(batch: ProducerBatch, now: number, backoffMs = this.retryBackoffMs): boolean {
    const q = this.queueOf(batch);
    const i = q === undefined ? -1 : q.inflight.indexOf(batch);
    if (q === undefined || i < 0) return false;
    q.inflight.splice(i, 1);
    batch.retryAt = now + backoffMs;
    let at = 0;
    while (at < q.queued.length && (q.queued[at] as ProducerBatch).order >= 0 && (q.queued[at] as ProducerBatch).order < batch.order) at++;
    q.queued.splice(at, 0, batch);
    return true;
  }

  /** Fails every batch, queued or in flight, past its delivery deadline; returns them. */
  expire(now: number): ProducerBatch[] {
    const expired: ProducerBatch[] = [];
    for (const q of this.queues) {
      this.expireFrom(q.queued, now, expired);
      this.expireFrom(q.inflight, now, expired);
    }
    return expired;
  }

  /** Fails everything with `err` (producer closing by force); later appends and waits throw it. */
  abort(err: KafkaError): void {
    this.closedWith = err;
    for (const q of this.queues) {
      for (const b of q.queued.splice(0)) b.delivery.reject(err);
      for (const b of q.inflight.splice(0)) b.delivery.reject(err);
    }
    this.usedBytes = 0;
    for (const w of this.waiters.splice(0)) {
      w.detach();
      w.reject(err);
    }
  }

  private expireFrom(batches: ProducerBatch[], now: number, expired: ProducerBatch[]): void {
    let kept = 0;
    for (const b of batches) {
      if (!b.delivery.isExpired(now)) {
        batches[kept++] = b;
        continue;
      }
      if (this.idempotent && b.baseSequence >= 0) this.sequenceGap = true;
      b.delivery.expire(now);
      this.usedBytes -= b.bytes;
      expired.push(b);
    }
    if (kept === batches.length) return;
    batches.length = kept;
    this.wakeWaiters();
  }

  /** 0 if the partition's head batch may drain now, else ms to wait (Infinity: blocked/empty). */
  private readyDelay(q: PartitionQueue, now: number): number {
    const batch = q.queued[0];
    if (batch === undefined || q.inflight.length >= this.maxInflight) return Infinity;
    // A retried batch must not overtake one drained before it that is still in flight.
    if (batch.order >= 0 && q.inflight.length > 0 && (q.inflight[0] as ProducerBatch).order < batch.order) return Infinity;
    if (batch.retryAt > now) return batch.retryAt - now;
    if (batch.closed || q.queued.length > 1 || batch.bytes >= this.batchBytes || this.waiters.length > 0) return 0;
    return Math.max(0, batch.createdAt + this.lingerMs - now);
  }

  private send(q: PartitionQueue, batch: ProducerBatch, node: number): void {
    q.queued.shift();
    batch.closed = true;
    batch.node = node;
    batch.attempts++;
    if (batch.order < 0) batch.order = q.nextOrder++;
    if (this.idempotent && batch.baseSequence < 0) {
      batch.baseSequence = q.nextSequence;
      batch.producerId = this.producerId;
      batch.producerEpoch = this.producerEpoch;
      q.nextSequence = (q.nextSequence + batch.records.length) % (INT32_MAX + 1);
    }
    let at = q.inflight.length;
    while (at > 0 && (q.inflight[at - 1] as ProducerBatch).order > batch.order) at--;
    q.inflight.splice(at, 0, batch);
  }

  /** Removes an answered batch from flight and frees its memory. */
  private land(batch: ProducerBatch): boolean {
    const q = this.queueOf(batch);
    const i = q === undefined ? -1 : q.inflight.indexOf(batch);
    if (q === undefined || i < 0) return false;
    q.inflight.splice(i, 1);
    this.usedBytes -= batch.bytes;
    this.wakeWaiters();
    return true;
  }

  private queueOf(batch: ProducerBatch): PartitionQueue | undefined {
    return this.byTopic.get(batch.topic)?.get(batch.partition);
  }

  private queueFor(topic: string, partition: number): PartitionQueue {
    let partitions = this.byTopic.get(topic);
    let q = partitions?.get(partition);
    if (q !== undefined) return q;
    if (!Number.isInteger(partition) || partition < 0 || partition > INT32_MAX) throw new RangeError(`partition ${partition}`);
    if (this.queues.length >= this.maxPartitions) throw new RangeError(`more than ${this.maxPartitions} partitions`);
    if (partitions === undefined) {
      partitions = new Map();
      this.byTopic.set(topic, partitions);
    }
    q = new PartitionQueue(topic, partition);
    partitions.set(partition, q);
    this.queues.push(q);
    return q;
  }

  /** An idempotent producer sends nothing without an id, or across a sequence gap. */
  private sequencesBlocked(): boolean {
    return this.idempotent && (this.producerId < 0 || this.sequenceGap);
  }

  private free(): number {
    return this.bufferBytes - this.usedBytes - this.reservedBytes;
  }

  private reserve(bytes: number): SpaceGrant {
    this.reservedBytes += bytes;
    return new SpaceGrant(bytes);
  }

  private spend(grant: SpaceGrant): void {
    if (grant.spent) throw new Error('space grant already spent');
    grant.spent = true;
    this.reservedBytes -= grant.bytes;
  }

  private wakeWaiters(): void {
    for (;;) {
      const head = this.waiters[0];
      if (head === undefined || this.free() < head.bytes) return;
      this.waiters.shift();
      head.detach();
      head.resolve(this.reserve(head.bytes));
    }
  }
}
