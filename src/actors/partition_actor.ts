// One partition's actor: the only writer of its log. Lives on exactly one shard worker and is
// driven by that shard's drain loop (produce, fetch reads, list-offsets) and by its group
// commits. It never blocks: appends are staged and become readable when the shard's group
// commit lands; fetches that find too little data park here and are woken by those commits.
import type { LogConfig, PartitionLog } from '../log/partition_log.js';
import type { AppendResult } from '../log/partition_log.js';
import { validateProducedBatch } from '../protocol/record_batch.js';

export interface ActorStats {
  topic: string;
  partition: number;
  handle: number;
  logStartOffset: number;
  logEndOffset: number;
  highWatermark: number;
  sizeBytes: number;
  batchesIn: number;
  bytesIn: number;
  fetches: number;
  parkedFetches: number;
  lastError: string | null;
}

export class PartitionActor {
  /** Request ids of parked fetches that include this partition. */
  readonly waiters = new Set<number>();
  private batchesIn = 0;
  private bytesIn = 0;
  private fetches = 0;
  lastError: string | null = null;

  constructor(
    readonly handle: number,
    readonly topic: string,
    readonly partition: number,
    readonly log: PartitionLog,
    private config: LogConfig,
  ) {}

  /** Validates and stages one produced batch. `records` must be owned by the caller (not a ring view). */
  produce(records: Buffer): AppendResult {
    const v = validateProducedBatch(records, this.config.maxMessageBytes);
    if (!v.ok) {
      this.lastError = v.message;
      return { kind: 'error', code: v.error };
    }
    const result = this.log.appendBatch(records, v.header);
    if (result.kind === 'appended') {
      this.batchesIn++;
      this.bytesIn += records.length;
    }
    return result;
  }

  read(fetchOffset: number, maxBytes: number, minOneBatch: boolean): ReturnType<PartitionLog['read']> {
    this.fetches++;
    return this.log.read(fetchOffset, maxBytes, minOneBatch);
  }

  updateConfig(config: LogConfig): void {
    this.config = config;
    this.log.updateConfig(config);
  }

  stats(): ActorStats {
    return {
      topic: this.topic,
      partition: this.partition,
      handle: this.handle,
      logStartOffset: this.log.logStartOffset,
      logEndOffset: this.log.logEndOffset,
      highWatermark: this.log.highWatermark,
      sizeBytes: this.log.sizeBytes,
      batchesIn: this.batchesIn,
      bytesIn: this.bytesIn,
      fetches: this.fetches,
      parkedFetches: this.waiters.size,
      lastError: this.lastError,
    };
  }
}
