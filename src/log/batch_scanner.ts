// Sequential scan of the batches in a segment file, for startup recovery (validation, index
// rebuild, producer-state replay). Runs synchronously on the shard worker while a partition opens.
// Reads in large chunks; CRCs of batches larger than a chunk are computed incrementally, so memory
// stays bounded by the chunk size whatever length a damaged header claims.
import { readSync } from 'node:fs';
import { crc32c as nativeCrc32c } from '@node-rs/crc32';
import { BATCH_HEADER_BYTES, BatchField, CRC_START, LOG_OVERHEAD } from '../protocol/record_batch.js';

const CHUNK_BYTES = 1 << 20;

export type ScanStop = 'end' | 'torn' | 'corrupt' | 'visitor';

export interface ScanResult {
  /** Position after the last batch accepted by the visitor. */
  endPos: number;
  stop: ScanStop;
  /** Bytes read for CRC checks and headers (a recovery-cost statistic). */
  bytesRead: number;
}

/** Called with a copy of the batch's 61 header bytes; returns false to stop before the batch. */
export type BatchVisitor = (header: Buffer, pos: number, size: number) => boolean;

export class BatchScanner {
  private readonly buf = Buffer.allocUnsafe(CHUNK_BYTES);
  private readonly header = Buffer.allocUnsafe(BATCH_HEADER_BYTES);
  private winStart = 0;
  private winLen = 0;
  private bytesRead = 0;

  constructor(
    private readonly fd: number,
    private readonly fileSize: number,
  ) {}

  /** Visits batches from `startPos`; with `verifyCrc` a batch whose CRC fails stops the scan. */
  scan(startPos: number, verifyCrc: boolean, visit: BatchVisitor): ScanResult {
    let pos = startPos;
    while (pos < this.fileSize) {
      const remaining = this.fileSize - pos;
      if (remaining < BATCH_HEADER_BYTES) return this.result(pos, 'torn');
      this.window(pos, BATCH_HEADER_BYTES);
      const at = pos - this.winStart;
      this.buf.copy(this.header, 0, at, at + BATCH_HEADER_BYTES);
      const size = this.header.readInt32BE(BatchField.batchLength) + LOG_OVERHEAD;
      if (size < BATCH_HEADER_BYTES || this.header.readInt8(BatchField.magic) !== 2) return this.result(pos, 'corrupt');
      if (size > remaining) return this.result(pos, 'torn');
      if (verifyCrc && !this.crcMatches(pos, size)) return this.result(pos, 'corrupt');
      if (!visit(this.header, pos, size)) return this.result(pos, 'visitor');
      pos += size;
    }
    return this.result(pos, 'end');
  }

  private result(endPos: number, stop: ScanStop): ScanResult {
    return { endPos, stop, bytesRead: this.bytesRead };
  }

  /** Makes file bytes [pos, pos + n) available at buf[pos - winStart]; n <= CHUNK_BYTES. */
  private window(pos: number, n: number): void {
    if (pos >= this.winStart && pos + n <= this.winStart + this.winLen) return;
    const want = Math.min(this.buf.length, this.fileSize - pos);
    let got = 0;
    while (got < want) {
      const r = readSync(this.fd, this.buf, got, want - got, pos + got);
      if (r === 0) break;
      got += r;
    }
    this.bytesRead += got;
    this.winStart = pos;
    this.winLen = got;
  }

  private crcMatches(pos: number, size: number): boolean {
    const expected = this.header.readUInt32BE(BatchField.crc);
    let crc = 0;
    let from = pos + CRC_START;
    const end = pos + size;
    while (from < end) {
      const n = Math.min(end - from, CHUNK_BYTES);
      this.window(from, n);
      if (this.winLen < from - this.winStart + n) return false;
      const at = from - this.winStart;
      crc = nativeCrc32c(this.buf.subarray(at, at + n), crc);
      from += n;
    }
    return crc >>> 0 === expected;
  }
}
