// PartitionLog behaviour on a real directory: offsets, visibility at commit, reads (containing batch,
// maxBytes, KIP-74), rolls, retention, LogAppendTime, timestamps, a model-based read property, and
// the reporting of storage failures the log absorbs.
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { ErrorCode } from '../../../src/protocol/errors.js';
import { batchCrcMatches, readBatchHeader, validateProducedBatch } from '../../../src/protocol/record_batch.js';
import { buildBatch, DEFAULT_TIMESTAMP, makeRecords } from './batch_builder.js';
import { StorageError } from '../../../src/log/io_backend.js';
import { append, batchOf, logConfig, openHarness, readAll, readRanges, splitBatches, waitFor } from './log_fixture.js';

describe('PartitionLog append and read', () => {
  it('assigns consecutive offsets and exposes data only after the commit lands', async () => {
    const h = openHarness();
    try {
      const { log } = h;
      assert.deepEqual([log.logStartOffset, log.logEndOffset, log.highWatermark], [0, 0, 0]);
      const a = append(log, batchOf(3, 10));
      const b = append(log, batchOf(2, 10));
      assert.deepEqual([a.baseOffset, a.lastOffset, b.baseOffset, b.lastOffset], [0, 2, 3, 4]);
      assert.equal(log.logEndOffset, 5);
      assert.equal(log.highWatermark, 0);
      assert.deepEqual(log.read(0, 1 << 20, true), { error: ErrorCode.NONE, ranges: [], bytes: 0 });
      await h.committer.commit(log);
      assert.equal(log.highWatermark, 5);
      const batches = readAll(log);
      assert.deepEqual(batches.map((x) => [x.baseOffset, x.lastOffset]), [[0, 2], [3, 4]]);
      for (const x of batches) assert.ok(batchCrcMatches(x.bytes, 0, x.bytes.length));
      assert.equal(log.sizeBytes, batches.reduce((n, x) => n + x.bytes.length, 0));
    } finally {
      await h.dispose();
    }
  });

  it('returns the whole batch that contains the fetch offset', async () => {
    const h = openHarness();
    try {
      for (let i = 0; i < 4; i++) append(h.log, batchOf(10, 5));
      await h.committer.commit(h.log);
      const r = h.log.read(25, 1 << 20, true);
      const batches = splitBatches(readRanges(r.ranges));
      assert.deepEqual(batches.map((x) => x.baseOffset), [20, 30]);
      assert.equal(r.bytes, r.ranges.reduce((n, x) => n + x.length, 0));
    } finally {
      await h.dispose();
    }
  });

  it('honours maxBytes with whole batches, and minOneBatch for an oversized first batch', async () => {
    const h = openHarness();
    try {
      const sizes = [100, 300, 50, 50].map((v) => batchOf(1, v));
      for (const b of sizes) append(h.log, b);
      await h.committer.commit(h.log);
      const len = sizes.map((b) => b.length);
      const only = (maxBytes: number, minOne: boolean): number[] =>
        splitBatches(readRanges(h.log.read(0, maxBytes, minOne).ranges)).map((x) => x.baseOffset);
      assert.deepEqual(only(len[0]!, false), [0]);
      assert.deepEqual(only(len[0]! + len[1]! - 1, false), [0]);
      assert.deepEqual(only(len[0]! + len[1]!, false), [0, 1]);
      assert.deepEqual(only(10, false), []);
      assert.deepEqual(only(10, true), [0]);
      assert.deepEqual(only(0, true), [0]);
      assert.deepEqual(splitBatches(readRanges(h.log.read(1, 10, true).ranges)).map((x) => x.baseOffset), [1]);
    } finally {
      await h.dispose();
    }
  });

  it('answers empty at the high watermark and OFFSET_OUT_OF_RANGE outside the log', async () => {
    const h = openHarness();
    try {
      append(h.log, batchOf(5, 5));
      await h.committer.commit(h.log);
      append(h.log, batchOf(5, 5)); // staged: 5..9
      assert.deepEqual(h.log.read(5, 1000, true), { error: ErrorCode.NONE, ranges: [], bytes: 0 });
      assert.deepEqual(h.log.read(10, 1000, true), { error: ErrorCode.NONE, ranges: [], bytes: 0 });
      assert.equal(h.log.read(11, 1000, true).error, ErrorCode.OFFSET_OUT_OF_RANGE);
      assert.equal(h.log.read(-1, 1000, true).error, ErrorCode.OFFSET_OUT_OF_RANGE);
    } finally {
      await h.dispose();
    }
  });

  it('refuses a batch larger than a segment with RECORD_LIST_TOO_LARGE', () => {
    const h = openHarness(logConfig({ segmentBytes: 500 }));
    const big = batchOf(1, 600);
    const v = validateProducedBatch(big, 1 << 20);
    assert.ok(v.ok);
    assert.deepEqual(h.log.appendBatch(big, v.header), { kind: 'error', code: ErrorCode.RECORD_LIST_TOO_LARGE });
    return h.dispose();
  });

  it('stamps LogAppendTime: attribute bit, maxTimestamp = now, valid CRC', async () => {
    const h = openHarness(logConfig({ timestampType: 'LogAppendTime' }));
    try {
      h.clock.t = 1_750_000_000_000;
      const batch = batchOf(3, 10);
      const v = validateProducedBatch(batch, 1 << 20);
      assert.ok(v.ok);
      const r = h.log.appendBatch(batch, v.header);
      assert.deepEqual(r, { kind: 'appended', baseOffset: 0, lastOffset: 2, logAppendTime: 1_750_000_000_000 });
      await h.committer.commit(h.log);
      const [stored] = readAll(h.log);
      const hdr = readBatchHeader(stored!.bytes, 0);
      assert.equal(hdr.attributes & 0x08, 0x08);
      assert.equal(hdr.maxTimestamp, 1_750_000_000_000);
      assert.ok(batchCrcMatches(stored!.bytes, 0, stored!.bytes.length));
      assert.deepEqual(h.log.maxTimestamp(), { offset: 0, timestamp: 1_750_000_000_000 });
    } finally {
      await h.dispose();
    }
  });

  it('stamps the leader epoch and reports CreateTime appends with logAppendTime -1', async () => {
    const h = openHarness();
    try {
      h.log.setLeaderEpoch(4);
      assert.equal(append(h.log, batchOf(1, 1)).baseOffset, 0);
      const r = h.log.appendBatch(batchOf(1, 1), readBatchHeader(batchOf(1, 1), 0));
      assert.equal(r.kind === 'appended' && r.logAppendTime, -1);
      await h.committer.commit(h.log);
      assert.equal(readBatchHeader(readAll(h.log)[0]!.bytes, 0).partitionLeaderEpoch, 4);
    } finally {
      await h.dispose();
    }
  });

  it('answers an idempotent retry with the original offsets without appending', async () => {
    const h = openHarness();
    try {
      const send = (seq: number): ReturnType<typeof h.log.appendBatch> => {
        const b = batchOf(4, 10, { producerId: 77, producerEpoch: 1, baseSequence: seq });
        return h.log.appendBatch(b, readBatchHeader(b, 0));
      };
      append(h.log, batchOf(2, 5));
      assert.equal(send(0).kind, 'appended');
      assert.equal(send(4).kind, 'appended');
      await h.committer.commit(h.log);
      assert.deepEqual(send(0), { kind: 'duplicate', baseOffset: 2, lastOffset: 5 });
      assert.deepEqual(send(9), { kind: 'error', code: ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER });
      assert.equal(h.log.logEndOffset, 10);
    } finally {
      await h.dispose();
    }
  });
});

describe('PartitionLog segments and retention', () => {
  it('rolls on segmentBytes and reads across segments', async () => {
    const h = openHarness(logConfig({ segmentBytes: 1000 }));
    try {
      for (let i = 0; i < 20; i++) append(h.log, batchOf(2, 150));
      await h.committer.commit(h.log);
      assert.ok(h.log.segmentCount > 5);
      const names = readdirSync(h.dir).filter((n) => n.endsWith('.log'));
      assert.equal(names.length, h.log.segmentCount);
      assert.ok(names.includes('00000000000000000000.log'));
      for (const n of names) assert.match(n, /^\d{20}\.log$/);
      assert.deepEqual(readAll(h.log).map((b) => b.baseOffset), Array.from({ length: 20 }, (_, i) => i * 2));
      const r = h.log.read(0, 1 << 20, true);
      assert.ok(r.ranges.length > 1, 'one range per segment');
    } finally {
      await h.dispose();
    }
  });

  it('rolls on segmentMs', async () => {
    const h = openHarness(logConfig({ segmentMs: 1000 }));
    try {
      append(h.log, batchOf(1, 10));
      h.clock.t += 999;
      append(h.log, batchOf(1, 10));
      assert.equal(h.log.segmentCount, 1);
      h.clock.t += 1;
      append(h.log, batchOf(1, 10));
      assert.equal(h.log.segmentCount, 2);
      await h.committer.commit(h.log);
      assert.ok(existsSync(join(h.dir, '00000000000000000002.log')));
    } finally {
      await h.dispose();
    }
  });

  it('deletes whole segments below an offset for a rewritten log, keeping the one that straddles it', async () => {
    const h = openHarness(logConfig({ segmentBytes: 1000 }));
    try {
      for (let i = 0; i < 30; i++) append(h.log, batchOf(1, 200));
      await h.committer.commit(h.log);
      const bases = readAll(h.log).map((b) => b.baseOffset);
      const cut = 17;
      const removed = h.log.deleteSegmentsBefore(cut);
      assert.ok(removed > 0);
      assert.ok(h.log.logStartOffset <= cut, `start ${h.log.logStartOffset} keeps offset ${cut}`);
      assert.deepEqual(readAll(h.log).map((b) => b.baseOffset), bases.filter((o) => o >= h.log.logStartOffset));
      assert.equal(h.log.deleteSegmentsBefore(cut), 0, 'idempotent');
      assert.equal(h.log.deleteSegmentsBefore(1e9) >= 0 && h.log.segmentCount >= 1, true, 'never the active segment');
      assert.equal(readdirSync(h.dir).filter((n) => n.endsWith('.log')).length, h.log.segmentCount);
      h.log.close();
      assert.equal(h.reopen().logStartOffset, readAll(h.log)[0]!.baseOffset, 'the new start survives a reopen');
    } finally {
      await h.dispose();
    }
  });

  it('deletes old segments by size, never the active one, and advances the log start', async () => {
    const h = openHarness(logConfig({ segmentBytes: 1000, retentionBytes: 2500 }));
    try {
      for (let i = 0; i < 30; i++) append(h.log, batchOf(1, 200));
      await h.committer.commit(h.log);
      const before = h.log.segmentCount;
      h.log.enforceRetention();
      assert.ok(h.log.segmentCount < before);
      assert.ok(h.log.sizeBytes >= 2500 - 1000 && h.log.sizeBytes <= 2500 + 1000, `size ${h.log.sizeBytes}`);
      assert.ok(h.log.logStartOffset > 0);
      assert.equal(h.log.read(0, 100, true).error, ErrorCode.OFFSET_OUT_OF_RANGE);
      assert.equal(readAll(h.log)[0]!.baseOffset, h.log.logStartOffset);
      assert.equal(readdirSync(h.dir).filter((n) => n.endsWith('.log')).length, h.log.segmentCount);
    } finally {
      await h.dispose();
    }
  });

  it('deletes segments whose newest timestamp is past retentionMs, rolling an expired active segment', async () => {
    const h = openHarness(logConfig({ segmentBytes: 1000, retentionMs: 10_000 }));
    try {
      const old = (): Buffer => buildBatch({ records: makeRecords(1, 300), baseTimestamp: h.clock.t - 60_000 });
      for (let i = 0; i < 6; i++) append(h.log, old());
      const fresh = buildBatch({ records: makeRecords(1, 300), baseTimestamp: h.clock.t });
      append(h.log, fresh);
      await h.committer.commit(h.log);
      h.log.enforceRetention();
      assert.equal(h.log.logStartOffset, 6);
      assert.deepEqual(readAll(h.log).map((b) => b.baseOffset), [6]);
      h.clock.t += 20_000;
      h.log.enforceRetention();
      assert.equal(h.log.logStartOffset, 7);
      assert.equal(h.log.highWatermark, 7);
      assert.equal(h.log.sizeBytes, 0);
      assert.equal(append(h.log, batchOf(1, 1)).baseOffset, 7);
      await h.committer.commit(h.log);
      assert.deepEqual(readAll(h.log).map((b) => b.baseOffset), [7]);
    } finally {
      await h.dispose();
    }
  });
});

describe('PartitionLog timestamps', () => {
  it('finds the first record at or after a timestamp, and the max timestamp record', async () => {
    const h = openHarness(logConfig({ segmentBytes: 2000, indexIntervalBytes: 100 }));
    try {
      // Batch i holds records with timestamps base + 10*i + {0..4}; batch 7 is out of order (older).
      for (let i = 0; i < 12; i++) {
        const t0 = i === 7 ? DEFAULT_TIMESTAMP : DEFAULT_TIMESTAMP + 10 * i;
        append(h.log, buildBatch({ records: makeRecords(5, 40), baseTimestamp: t0 }));
      }
      await h.committer.commit(h.log);
      assert.ok(h.log.segmentCount > 1);
      assert.deepEqual(h.log.offsetForTimestamp(DEFAULT_TIMESTAMP - 5), { offset: 0, timestamp: DEFAULT_TIMESTAMP });
      assert.deepEqual(h.log.offsetForTimestamp(DEFAULT_TIMESTAMP + 32), { offset: 17, timestamp: DEFAULT_TIMESTAMP + 32 });
      assert.deepEqual(h.log.offsetForTimestamp(DEFAULT_TIMESTAMP + 76), { offset: 40, timestamp: DEFAULT_TIMESTAMP + 80 });
      assert.deepEqual(h.log.offsetForTimestamp(DEFAULT_TIMESTAMP + 114), { offset: 59, timestamp: DEFAULT_TIMESTAMP + 114 });
      assert.equal(h.log.offsetForTimestamp(DEFAULT_TIMESTAMP + 115), null);
      assert.deepEqual(h.log.maxTimestamp(), { offset: 59, timestamp: DEFAULT_TIMESTAMP + 114 });
    } finally {
      await h.dispose();
    }
  });

  it('ignores staged batches and answers null on an empty log', async () => {
    const h = openHarness();
    try {
      assert.equal(h.log.maxTimestamp(), null);
      append(h.log, batchOf(2, 1));
      assert.equal(h.log.maxTimestamp(), null);
      assert.equal(h.log.offsetForTimestamp(0), null);
      await h.committer.commit(h.log);
      assert.deepEqual(h.log.offsetForTimestamp(0), { offset: 0, timestamp: DEFAULT_TIMESTAMP });
    } finally {
      await h.dispose();
    }
  });
});

describe('PartitionLog model (property)', () => {
  it('reads return exactly the committed batches a model predicts', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ count: fc.integer({ min: 1, max: 5 }), value: fc.integer({ min: 0, max: 400 }), commit: fc.boolean() }), { minLength: 1, maxLength: 40 }),
        fc.array(fc.record({ at: fc.nat(), maxBytes: fc.integer({ min: 0, max: 3000 }), minOne: fc.boolean() }), { minLength: 1, maxLength: 10 }),
        fc.integer({ min: 2500, max: 6000 }),
        async (appends, reads, segmentBytes) => {
          const h = openHarness(logConfig({ segmentBytes, indexIntervalBytes: 150 }));
          try {
            const model: Array<{ base: number; last: number; size: number }> = [];
            let committed = 0;
            for (const a of appends) {
              const b = batchOf(a.count, a.value);
              const r = append(h.log, b);
              model.push({ base: r.baseOffset, last: r.lastOffset, size: b.length });
              if (a.commit) {
                await h.committer.commit(h.log);
                committed = model.length;
              }
            }
            const visible = model.slice(0, committed);
            const hw = committed === 0 ? 0 : visible[committed - 1]!.last + 1;
            assert.equal(h.log.highWatermark, hw);
            for (const q of reads) {
              const offset = hw === 0 ? 0 : q.at % hw;
              const got = splitBatches(readRanges(h.log.read(offset, q.maxBytes, q.minOne).ranges)).map((x) => x.baseOffset);
              const first = visible.findIndex((m) => m.last >= offset);
              const expected: number[] = [];
              let bytes = 0;
              for (let i = first; i >= 0 && i < visible.length; i++) {
                const m = visible[i]!;
                if (bytes + m.size > q.maxBytes && !(q.minOne && expected.length === 0)) break;
                expected.push(m.base);
                bytes += m.size;
              }
              assert.deepEqual(got, expected);
            }
          } finally {
            await h.dispose();
          }
        },
      ),
      { numRuns: 40 },
    );
  });
});

describe('PartitionLog storage warnings', () => {
  it('a failure the log absorbs (a background seal) is reported with its cause and kept as lastWarning', async () => {
    const warnings: Array<[string, StorageError]> = [];
    const h = openHarness(logConfig({ segmentBytes: 600 }), { kind: 'always' }, undefined, { onWarning: (what, err) => warnings.push([what, err]) });
    try {
      // The first segment rolls before it is committed, so its seal is the submission after the
      // commit's; both are parked so that only the seal fails.
      for (let i = 0; i < 3; i++) append(h.log, batchOf(2, 80));
      const calls = h.io.calls.length;
      h.io.hold();
      const committed = h.committer.commit(h.log);
      await waitFor(() => h.io.calls.length > calls, 'the group commit');
      h.io.release();
      h.io.hold();
      await committed;
      await waitFor(() => h.io.calls.length > calls + 1, 'the seal');
      h.io.failNext(false);
      h.io.release();
      await waitFor(() => warnings.length > 0, 'the seal failure');
      const [what, err] = warnings[0]!;
      assert.match(what, /^seal /);
      assert.ok(err instanceof StorageError);
      assert.match(err.message, /injected write failure/);
      assert.equal(h.log.lastWarning, err);
      assert.equal(h.log.recoveryPoint, 0);
    } finally {
      await h.dispose();
    }
  });
});
