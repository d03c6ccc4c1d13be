// Adaptive fetch size for the parallel consumer: sizes the next fetch to about `targetBufferMs`
// of work at the recently observed processing rate, minus what is already buffered.
// Runs on the consumer's thread; a pure state machine — time comes in as `now` (ms).
// The rate is an exponentially weighted moving average of completions/s over samples of at
// least `sampleMs`, weighted by elapsed time (half-life `halfLifeMs`), so bursts of completion
// calls do not skew it; bytes per record is averaged the same way to turn records into bytes.
// Why it cannot get stuck small: while the buffer runs dry the measured rate is the supply rate,
// one fetch per round trip, so a round trip shorter than the target buffer time asks for more
// than the last fetch brought; the floor keeps the first fetches useful.
// Invariants: every answer lies within [minRecords, maxRecords] and [minBytes, maxBytes].

export interface AdaptiveFetchOptions {
  readonly minBytes: number;
  readonly maxBytes: number;
  readonly minRecords?: number;
  readonly maxRecords: number;
  /** Work to keep buffered, in ms of processing at the observed rate; default 1000. */
  readonly targetBufferMs?: number;
  /** Half-life of the rate average; default 2000 ms. */
  readonly halfLifeMs?: number;
  /** Shortest sample folded into the average; default 100 ms. */
  readonly sampleMs?: number;
  /** Bytes per record assumed before any were seen; default 1024. */
  readonly initialRecordBytes?: number;
}

export interface FetchSize {
  readonly maxRecords: number;
  readonly maxBytes: number;
}

function clamp(value: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, value));
}

export class AdaptiveFetchSizer {
  private readonly minBytes: number;
  private readonly maxBytes: number;
  private readonly minRecords: number;
  private readonly maxRecords: number;
  private readonly targetBufferMs: number;
  private readonly halfLifeMs: number;
  private readonly sampleMs: number;
  private recordsPerSecond = -1; // -1: no sample yet
  private bytesPerRecord: number;
  private pendingRecords = 0;
  private pendingBytes = 0;
  private sampleStart: number | null = null;

  constructor(options: AdaptiveFetchOptions) {
    this.minBytes = options.minBytes;
    this.maxBytes = options.maxBytes;
    this.minRecords = options.minRecords ?? 1;
    this.maxRecords = options.maxRecords;
    this.targetBufferMs = options.targetBufferMs ?? 1000;
    this.halfLifeMs = options.halfLifeMs ?? 2000;
    this.sampleMs = options.sampleMs ?? 100;
    this.bytesPerRecord = options.initialRecordBytes ?? 1024;
    const positive = [this.minBytes, this.minRecords, this.targetBufferMs, this.halfLifeMs, this.sampleMs, this.bytesPerRecord];
    if (positive.some((v) => !(v > 0)) || this.maxBytes < this.minBytes || this.maxRecords < this.minRecords) {
      throw new RangeError('adaptive fetch options need positive values and min ≤ max');
    }
  }

  /** Recent completions per second; 0 before the first full sample. */
  get rate(): number {
    return Math.max(0, this.recordsPerSecond);
  }

  /** `records` messages totalling `bytes` finished processing at time `now`. */
  completed(records: number, bytes: number, now: number): void {
    this.pendingRecords += records;
    this.pendingBytes += bytes;
    this.sample(now);
  }

  /** Limits for the next fetch, given what is still buffered. */
  next(bufferedRecords: number, now: number): FetchSize {
    this.sample(now);
    if (this.recordsPerSecond < 0) return { maxRecords: this.minRecords, maxBytes: this.minBytes };
    const wanted = (this.recordsPerSecond * this.targetBufferMs) / 1000 - bufferedRecords;
    const maxRecords = Math.ceil(clamp(wanted, this.minRecords, this.maxRecords));
    const maxBytes = Math.ceil(clamp(maxRecords * this.bytesPerRecord, this.minBytes, this.maxBytes));
    return { maxRecords, maxBytes };
  }

  private sample(now: number): void {
    if (this.sampleStart === null) {
      this.sampleStart = now;
      return;
    }
    const elapsed = now - this.sampleStart;
    if (elapsed < this.sampleMs) return;
    const instant = (this.pendingRecords * 1000) / elapsed;
    if (this.recordsPerSecond < 0) this.recordsPerSecond = instant;
    else this.recordsPerSecond += (1 - 2 ** (-elapsed / this.halfLifeMs)) * (instant - this.recordsPerSecond);
    if (this.pendingRecords > 0) {
      const size = this.pendingBytes / this.pendingRecords;
      this.bytesPerRecord += (1 - 2 ** (-elapsed / this.halfLifeMs)) * (size - this.bytesPerRecord);
    }
    this.pendingRecords = 0;
    this.pendingBytes = 0;
    this.sampleStart = now;
  }
}
