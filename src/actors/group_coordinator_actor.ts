// The driver of one group coordinator: the I/O half around the pure GroupCoordinator of one
// `__consumer_offsets` partition, living on the shard that owns that partition. It replays the
// partition's log into the coordinator when the partition opens, feeds it calls from the ring,
// turns its append effects into record batches on the partition's log (acknowledged through the
// shard's group commit, so nothing is answered before it is durable under the flush policy),
// and runs its one timer at the coordinator's next deadline. It also keeps the partition compact:
// a KeyImage of the latest record per key is rewritten to the log once as many bytes have been
// appended since the last rewrite as the image holds, and the segments before the rewrite are
// then deleted, so the log stays within about two segments plus the live state. The image holds
// what it loaded re-encoded by the codec, so records in an older layout are written in Kafka's
// schemas by the first rewrite after a start (or sooner, by the next write of their key).
// A call's ref is opaque here: the shard makes it the call's lane-qualified key (lanes.ts), so a
// reply given a rebalance later still goes back to the lane the call came from.
import { closeSync, openSync, readSync } from 'node:fs';
import { decodeRecordBatches, encodeRecordBatch } from '../protocol/records.js';
import type { GroupCommitter } from '../log/group_commit.js';
import { ErrorCode } from '../protocol/errors.js';
import { KeyImage, type KeyedRecord } from '../log/key_image.js';
import { GroupCoordinator, type CoordinatorDeps } from '../coordinator/groups/group_coordinator.js';
import type { GroupCall, GroupEffect, GroupRecord, GroupReply, TopicIndex } from '../coordinator/groups/group_api.js';
import { GroupRecordCodec, type RecordBytes } from '../coordinator/groups/group_records.js';
import type { PartitionActor } from './partition_actor.js';

const LOAD_CHUNK_BYTES = 4 << 20;
/** Kafka's offsets.commit.timeout.ms: how long a write waits for the in-sync replicas. */
const REPLICATION_TIMEOUT_MS = 5000;
const REWRITE_BATCH_BYTES = 1 << 20;
/** Below this much new data a rewrite is not worth its I/O, however small the image. */
const REWRITE_MIN_BYTES = 1 << 20;

export interface GroupActorHooks {
  /** The answer to the call made with `ref`. */
  reply(ref: number, reply: GroupReply): void;
  rebalanced(e: Extract<GroupEffect, { kind: 'rebalanced' }>): void;
  /** A record the coordinator wrote earlier cannot be read back: logged, then skipped. */
  badRecord(offset: number, err: unknown): void;
}

export class GroupCoordinatorActor {
  private readonly coordinator: GroupCoordinator;
  private timer: NodeJS.Timeout | null = null;
  private timerAt = Infinity;
  private closed = false;
  private readonly image = new KeyImage();
  private readonly codec = new GroupRecordCodec();
  private appendsInFlight = 0;
  private bytesSinceRewrite = 0;
  private rewriting = false;

  constructor(
    readonly partition: PartitionActor,
    private readonly committer: GroupCommitter,
    deps: CoordinatorDeps,
    private readonly hooks: GroupActorHooks,
    private readonly now: () => number,
  ) {
    this.coordinator = new GroupCoordinator(deps);
    this.coordinator.load(this.readAll(), now());
    // History written before this start counts towards the next rewrite.
    this.bytesSinceRewrite = partition.log.sizeBytes;
    this.schedule();
  }

  call(ref: number, call: GroupCall): void {
    this.apply(this.coordinator.handle(ref, call, this.now()));
  }

  setTopics(topics: TopicIndex): void {
    this.apply(this.coordinator.setTopics(topics, this.now()));
  }

  stats(): ReturnType<GroupCoordinator['stats']> {
    return this.coordinator.stats();
  }

  committedOffsets(): ReturnType<GroupCoordinator['committedOffsets']> {
    return this.coordinator.committedOffsets();
  }

  close(): void {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private apply(effects: GroupEffect[]): void {
    for (const e of effects) {
      if (e.kind === 'reply') this.hooks.reply(e.ref, e.reply);
      else if (e.kind === 'append') this.append(e.token, e.records);
      else this.hooks.rebalanced(e);
    }
    this.schedule();
  }

  private append(token: number, records: GroupRecord[]): void {
    const encoded = records.flatMap((r) => this.codec.encode(r));
    const staged = this.stage(encoded);
    if (staged === null) {
      // Defer so effects of one call are applied in order before the failure feeds back.
      queueMicrotask(() => this.settle(token, false, encoded, 0));
      return;
    }
    this.appendsInFlight++;
    // As Kafka's coordinator writes with acks=all: durable here, then held by the in-sync replicas.
    this.committer.commit(this.partition.log).then(
      () => this.partition.awaitReplicated(staged.endOffset, REPLICATION_TIMEOUT_MS).then((code) => this.settle(token, code === ErrorCode.NONE, encoded, staged.bytes)),
      () => this.settle(token, false, encoded, staged.bytes),
    );
  }

  /** Appends one batch of records: its size and end offset, or null if the log refused it. */
  private stage(records: readonly KeyedRecord[]): { bytes: number; endOffset: number } | null {
    const now = this.now();
    const batch = encodeRecordBatch(records.map((r) => ({ key: r.key, value: r.value, timestamp: now })));
    const appended = this.partition.append(batch);
    return appended.kind === 'error' ? null : { bytes: batch.length, endOffset: appended.lastOffset + 1 };
  }

  private settle(token: number, ok: boolean, records: readonly RecordBytes[], bytes: number): void {
    if (bytes > 0) this.appendsInFlight--;
    if (ok) this.partition.committed();
    if (this.closed) return;
    if (ok) {
      for (const r of records) this.image.apply(r);
      this.bytesSinceRewrite += bytes;
    } else {
      this.codec.unwritten(records);
    }
    this.apply(this.coordinator.appended(token, ok, this.now()));
    this.maybeRewrite();
  }

  /**
   * Rewrites the live records once enough history piled up, then drops the segments before the
   * rewrite. Only with no append in flight: the image must be exactly the log's durable state.
   */
  private maybeRewrite(): void {
    const log = this.partition.log;
    if (this.rewriting || this.appendsInFlight > 0 || log.segmentCount < 2) return;
    if (this.bytesSinceRewrite < Math.max(REWRITE_MIN_BYTES, this.image.bytes)) return;
    const from = log.logEndOffset;
    for (const records of this.image.batches(REWRITE_BATCH_BYTES)) if (this.stage(records) === null) return;
    this.rewriting = true;
    this.committer.commit(log).then(
      () => {
        this.rewriting = false;
        this.bytesSinceRewrite = 0;
        if (!this.closed) log.deleteSegmentsBefore(from);
      },
      () => {
        this.rewriting = false;
      },
    );
  }

  private schedule(): void {
    if (this.closed) return;
    const at = this.coordinator.nextDeadline() ?? Infinity;
    if (at === this.timerAt) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.timerAt = at;
    if (at === Infinity) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.timerAt = Infinity;
      this.apply(this.coordinator.tick(this.now()));
    }, Math.max(0, at - this.now()));
  }

  /** Every committed record of the partition, decoded, in log order; KIP-848 groups whole, at the end. */
  private *readAll(): Generator<GroupRecord> {
    for (const raw of this.readKeyed()) {
      this.image.apply(raw);
      let decoded: GroupRecord | null;
      try {
        decoded = this.codec.decode(raw.key, raw.value);
      } catch (err) {
        this.hooks.badRecord(raw.offset, err);
        continue;
      }
      if (decoded !== null) yield this.reencoded(decoded);
    }
    for (const group of this.codec.finishLoad()) yield this.reencoded(group);
  }

  /** A loaded record, whose key the image now holds as this code writes it (tombstones for members a group lost included). */
  private reencoded(r: GroupRecord): GroupRecord {
    for (const bytes of this.codec.encode(r)) this.image.apply(bytes);
    return r;
  }

  /** Every committed keyed record of the partition, in log order, up to the first unreadable batch. */
  private *readKeyed(): Generator<KeyedRecord & { offset: number }> {
    const log = this.partition.log;
    let offset = log.logStartOffset;
    // A new leader loads everything its log holds, as Kafka's coordinator loads to the log end:
    // records past the high watermark were written by the previous leader and are committed by
    // this one's followers fetching them.
    while (offset < log.durableOffset) {
      const read = log.read(offset, LOAD_CHUNK_BYTES, true, 'log-end');
      if (read.error !== 0 || read.bytes === 0) return;
      let batches: ReturnType<typeof decodeRecordBatches>;
      try {
        batches = decodeRecordBatches(readRanges(read.ranges));
      } catch (err) {
        this.hooks.badRecord(offset, err);
        return;
      }
      if (batches.length === 0) return;
      for (const batch of batches) {
        for (const r of batch.records) {
          if (r.offset < offset || r.key === null) continue;
          // Copies: views would pin the whole read chunk for as long as the key lives.
          yield { offset: r.offset, key: Buffer.from(r.key), value: r.value === null ? null : Buffer.from(r.value) };
        }
        offset = batch.lastOffset + 1;
      }
    }
  }
}

function readRanges(ranges: readonly { path: string; position: number; length: number }[]): Buffer {
  const parts: Buffer[] = [];
  for (const r of ranges) {
    const fd = openSync(r.path, 'r');
    try {
      const b = Buffer.allocUnsafe(r.length);
      let done = 0;
      while (done < r.length) {
        const n = readSync(fd, b, done, r.length - done, r.position + done);
        if (n === 0) break;
        done += n;
      }
      parts.push(b.subarray(0, done));
    } finally {
      closeSync(fd);
    }
  }
  return Buffer.concat(parts);
}
