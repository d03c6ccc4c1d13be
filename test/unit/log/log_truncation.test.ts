// PartitionLog as a replica's log: truncation at any offset (reads, offsets, epoch cache, producer
// state, reopen, appends after), the high watermark under the owner policy and its checkpoint,
// follower reads, and recovery of the epoch cache, the high watermark and interrupted truncations.
import assert from 'node:assert/strict';
import { existsSync, readFileSync, truncateSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { ErrorCode, KafkaError } from '../../../src/protocol/errors.js';
import { LEADER_EPOCH_FILE, type EpochEntry } from '../../../src/log/leader_epoch_cache.js';
import { HIGH_WATERMARK_FILE, TRUNCATION_FILE } from '../../../src/log/log_checkpoint.js';
import { PartitionLog, type PartitionLogOptions, type ReadIsolation } from '../../../src/log/partition_log.js';
import { validateProducedBatch } from '../../../src/protocol/record_batch.js';
import { buildBatch, makeRecords } from './batch_builder.js';
import { append, batchOf, Clock, logConfig, openHarness, readAll, readRanges, removeDir, restoreDir, snapshotDir, splitBatches, testIoBackend, waitFor } from './log_fixture.js';

const OWNER: PartitionLogOptions = { highWatermark: 'owner' };

interface ModelBatch {
  base: number;
  last: number;
  epoch: number;
}

/** The epoch cache a log holding `batches` must have: each epoch starts at its first batch. */
function expectedEpochs(batches: readonly ModelBatch[]): EpochEntry[] {
  const out: EpochEntry[] = [];
  for (const b of batches) if (b.epoch >= 0 && out.at(-1)?.epoch !== b.epoch) out.push({ epoch: b.epoch, startOffset: b.base });
  return out;
}

/** Where truncateTo(target) must leave the log end: the start of the batch holding target. */
function boundaryFor(batches: readonly ModelBatch[], target: number, logEnd: number): number {
  if (target >= logEnd) return logEnd;
  return batches.find((b) => b.last >= target)!.base;
}

function spans(log: PartitionLog): Array<[number, number]> {
  return readAll(log).map((b) => [b.baseOffset, b.lastOffset]);
}

function readOffsets(log: PartitionLog, from: number, isolation: ReadIsolation): number[] {
  const r = log.read(from, 1 << 30, true, isolation);
  assert.equal(r.error, ErrorCode.NONE);
  return splitBatches(readRanges(r.ranges)).map((b) => b.baseOffset);
}

function idempotentBatch(records: number, baseSequence: number): Buffer {
  return buildBatch({ records: makeRecords(records, 8), producerId: 7, producerEpoch: 0, baseSequence });
}

function appendResult(log: PartitionLog, batch: Buffer): ReturnType<PartitionLog['appendBatch']> {
  const v = validateProducedBatch(batch, 1 << 30);
  if (!v.ok) throw new Error(v.message);
  return log.appendBatch(batch, v.header);
}

describe('PartitionLog.truncateTo', () => {
  it('property: truncation at any offset keeps exactly the batches below the boundary, the epoch cache and state across reopen, and appends resume there', async () => {
    const scenario = fc.record({
      segmentBytes: fc.integer({ min: 600, max: 2500 }),
      batches: fc.array(
        fc.record({ records: fc.integer({ min: 1, max: 4 }), valueBytes: fc.integer({ min: 1, max: 100 }), epochBump: fc.nat({ max: 2 }), commit: fc.boolean() }),
        { minLength: 1, maxLength: 20 },
      ),
      target: fc.nat({ max: 10_000 }),
    });
    await fc.assert(
      fc.asyncProperty(scenario, async ({ segmentBytes, batches, target: t }) => {
        const h = openHarness(logConfig({ segmentBytes }));
        try {
          const model: ModelBatch[] = [];
          let epoch = 0;
          h.log.setLeaderEpoch(epoch);
          for (const b of batches) {
            if (b.epochBump > 0) h.log.setLeaderEpoch((epoch += b.epochBump));
            const r = append(h.log, batchOf(b.records, b.valueBytes));
            model.push({ base: r.baseOffset, last: r.lastOffset, epoch });
            if (b.commit) await h.committer.commit(h.log);
          }
          await h.committer.commit(h.log);
          const leo = h.log.logEndOffset;
          const target = t % (leo + 2);
          const boundary = boundaryFor(model, target, leo);
          const kept = model.filter((b) => b.base < boundary);

          assert.equal(h.log.truncateTo(target), boundary);
          const check = (log: PartitionLog, batchesNow: readonly ModelBatch[], end: number): void => {
            assert.deepEqual([log.logEndOffset, log.durableOffset, log.highWatermark], [end, end, end]);
            assert.deepEqual(spans(log), batchesNow.map((b) => [b.base, b.last]));
            assert.deepEqual(log.epochEntries, expectedEpochs(batchesNow));
          };
          check(h.log, kept, boundary);
          h.log.close();
          check(h.reopen(), kept, boundary);
          assert.equal(h.log.recovery.rebuiltEpochCache, false);

          h.log.setLeaderEpoch(epoch + 1);
          const r = append(h.log, batchOf(2, 30));
          assert.equal(r.baseOffset, boundary);
          await h.committer.commit(h.log);
          const after = [...kept, { base: boundary, last: boundary + 1, epoch: epoch + 1 }];
          check(h.log, after, boundary + 2);
          h.log.close();
          check(h.reopen(), after, boundary + 2);
        } finally {
          await h.dispose();
        }
      }),
      { numRuns: 40 },
    );
  });

  it('restores producer state as of the boundary: retries of cut batches append again, older ones are still duplicates', async () => {
    const h = openHarness();
    try {
      const offsets: number[] = [];
      for (let i = 0; i < 7; i++) {
        offsets.push(append(h.log, idempotentBatch(2, i * 2)).baseOffset);
        await h.committer.commit(h.log);
      }
      // Only the last five batches per producer are remembered; cutting two must bring back the
      // older ones that had been pushed out, not just forget the two.
      assert.equal(h.log.truncateTo(offsets[5]! + 1), offsets[5]);
      const retryOld = appendResult(h.log, idempotentBatch(2, 2));
      assert.deepEqual(retryOld, { kind: 'duplicate', baseOffset: offsets[1], lastOffset: offsets[1]! + 1 });
      const retryCut = appendResult(h.log, idempotentBatch(2, 10));
      assert.equal(retryCut.kind, 'appended');
      assert.equal(retryCut.kind === 'appended' && retryCut.baseOffset, offsets[5]);
    } finally {
      await h.dispose();
    }
  });

  it('voids a seal in progress on a segment it cuts: the cut segment is active and unsealed afterwards', async () => {
    const h = openHarness(logConfig({ segmentBytes: 600 }));
    try {
      // Segment 0 (offsets 0..3) rolls before it is committed, so its seal starts when the commit lands.
      for (let i = 0; i < 3; i++) append(h.log, batchOf(2, 80));
      const calls = h.io.calls.length;
      h.io.hold();
      const committed = h.committer.commit(h.log);
      await waitFor(() => h.io.calls.length > calls, 'the group commit');
      h.io.release();
      h.io.hold(); // parks the seal that the landing commit starts
      await committed;
      await waitFor(() => h.io.calls.length > calls + 1, 'the seal');
      assert.equal(h.log.segmentCount, 2);
      assert.equal(h.log.truncateTo(2), 2);
      h.io.release();
      await new Promise((resolve) => setTimeout(resolve, 200));
      assert.equal(h.log.recoveryPoint, 0, 'the voided seal must not mark the cut segment sealed');
      append(h.log, batchOf(1, 5));
      await h.committer.commit(h.log);
      h.log.close();
      assert.deepEqual(spans(h.reopen()), [[0, 1], [2, 2]]);
    } finally {
      await h.dispose();
    }
  });

  it('refuses below the log start and while appends are staged; at or past the log end it changes nothing', async () => {
    const h = openHarness(logConfig({ segmentBytes: 300 }));
    try {
      h.log.setLeaderEpoch(1);
      for (let i = 0; i < 6; i++) append(h.log, batchOf(2, 100));
      await h.committer.commit(h.log);
      h.log.setLeaderEpoch(3);
      append(h.log, batchOf(2, 100));
      await h.committer.commit(h.log);
      assert.ok(h.log.deleteSegmentsBefore(4) > 0);
      const start = h.log.logStartOffset;
      assert.deepEqual(h.log.epochEntries, [{ epoch: 1, startOffset: start }, { epoch: 3, startOffset: 12 }]);
      assert.throws(() => h.log.truncateTo(start - 1), (e: unknown) => e instanceof KafkaError && e.code === ErrorCode.OFFSET_OUT_OF_RANGE);
      assert.equal(h.log.truncateTo(14), 14);
      assert.equal(h.log.truncateTo(99), 14);
      append(h.log, batchOf(1, 1));
      assert.throws(() => h.log.truncateTo(start), /staged/);
      await h.committer.commit(h.log);
      assert.equal(h.log.truncateTo(start), start);
      assert.deepEqual([h.log.logStartOffset, h.log.logEndOffset, h.log.epochEntries.length], [start, start, 0]);
      assert.throws(() => h.log.setLeaderEpoch(2), (e: unknown) => e instanceof KafkaError && e.code === ErrorCode.FENCED_LEADER_EPOCH);
    } finally {
      await h.dispose();
    }
  });
});

describe('epoch cache under retention', () => {
  it('moves the first entry up to the log start, drops it when retention empties the log, and reopens the same', async () => {
    const h = openHarness(logConfig({ segmentBytes: 1000, retentionMs: 10_000 }));
    try {
      const batch = (age: number): Buffer => buildBatch({ records: makeRecords(1, 300), baseTimestamp: h.clock.t - age });
      h.log.setLeaderEpoch(1);
      for (let i = 0; i < 4; i++) append(h.log, batch(60_000));
      h.log.setLeaderEpoch(2);
      for (let i = 0; i < 2; i++) append(h.log, batch(60_000));
      append(h.log, batch(0));
      await h.committer.commit(h.log);
      h.log.enforceRetention();
      assert.equal(h.log.logStartOffset, 6);
      const reopenedEntries = (): EpochEntry[] => {
        h.log.close();
        const log = h.reopen();
        assert.equal(log.recovery.rebuiltEpochCache, false);
        return [...log.epochEntries];
      };
      assert.deepEqual(h.log.epochEntries, [{ epoch: 2, startOffset: 6 }]);
      assert.deepEqual(reopenedEntries(), [{ epoch: 2, startOffset: 6 }]);
      h.clock.t += 20_000;
      h.log.enforceRetention();
      assert.deepEqual([h.log.logStartOffset, h.log.logEndOffset], [7, 7]);
      assert.deepEqual(h.log.epochEntries, []);
      assert.deepEqual(reopenedEntries(), []);
    } finally {
      await h.dispose();
    }
  });
});

describe('high watermark and follower reads', () => {
  it('under the owner policy only updateHighWatermark moves it, never past the durable offset; client reads stop below it, follower reads at the durable end', async () => {
    const h = openHarness(logConfig(), { kind: 'always' }, undefined, OWNER);
    try {
      const { log } = h;
      for (let i = 0; i < 3; i++) append(log, batchOf(5, 10));
      await h.committer.commit(log);
      assert.deepEqual([log.highWatermark, log.durableOffset, log.logEndOffset], [0, 15, 15]);
      assert.deepEqual(readOffsets(log, 0, 'high-watermark'), []);
      assert.deepEqual(readOffsets(log, 0, 'log-end'), [0, 5, 10]);
      assert.equal(log.updateHighWatermark(7), 7);
      // 7 falls inside the batch 5..9, which stays invisible until the high watermark passes it.
      assert.deepEqual(readOffsets(log, 0, 'high-watermark'), [0]);
      assert.deepEqual(readOffsets(log, 5, 'high-watermark'), []);
      assert.equal(log.updateHighWatermark(3), 7);
      append(log, batchOf(5, 10));
      assert.equal(log.updateHighWatermark(100), 15);
      assert.deepEqual(readOffsets(log, 0, 'high-watermark'), [0, 5, 10]);
      await h.committer.commit(log);
      assert.deepEqual([log.highWatermark, log.durableOffset, log.logEndOffset], [15, 20, 20]);
      assert.deepEqual(readOffsets(log, 10, 'log-end'), [10, 15]);
    } finally {
      await h.dispose();
    }
  });

  it('the high-watermark checkpoint round-trips through a crash and a clean close, clamped to the recovered log', async () => {
    const h = openHarness(logConfig(), { kind: 'always' }, undefined, OWNER);
    const io = testIoBackend();
    const clock = new Clock();
    const dirs: string[] = [];
    const reopened = (files: Map<string, Buffer>, edit: (dir: string) => void, options = OWNER): PartitionLog => {
      const dir = restoreDir(files);
      dirs.push(dir);
      edit(dir);
      return PartitionLog.open(dir, logConfig(), io, clock.now, options);
    };
    try {
      const sizes: number[] = [];
      for (let i = 0; i < 3; i++) {
        const b = batchOf(5, 10);
        sizes.push(b.length);
        append(h.log, b);
      }
      await h.committer.commit(h.log);
      h.log.updateHighWatermark(15);
      h.log.checkpointHighWatermark();
      h.log.updateHighWatermark(99);
      const crash = snapshotDir(h.dir);
      const segment = [...crash.keys()].find((n) => n.endsWith('.log'))!;
      const logs = [
        [reopened(crash, () => {}), 15],
        [reopened(crash, (d) => truncateSync(join(d, segment), sizes[0]! + sizes[1]! + 3)), 10],
        [reopened(crash, (d) => writeFileSync(join(d, HIGH_WATERMARK_FILE), '0\n1\n999\n')), 15],
        [reopened(crash, (d) => writeFileSync(join(d, HIGH_WATERMARK_FILE), '0\n1\n9x\n')), 0],
        [reopened(crash, (d) => unlinkSync(join(d, HIGH_WATERMARK_FILE))), 0],
        [reopened(crash, (d) => writeFileSync(join(d, HIGH_WATERMARK_FILE), '0\n1\n3\n'), {}), 15],
      ] as const;
      for (const [i, [log, hw]] of logs.entries()) {
        assert.equal(log.highWatermark, hw, `case ${i}`);
        log.close();
      }
      h.log.updateHighWatermark(5);
      h.log.close();
      assert.equal(readFileSync(join(h.dir, HIGH_WATERMARK_FILE), 'latin1'), '0\n1\n15\n');
      assert.equal(h.reopen().highWatermark, 15);
    } finally {
      for (const d of dirs) removeDir(d);
      await h.dispose();
    }
  });
});

describe('recovery of the epoch cache and of interrupted truncations', () => {
  /** A multi-segment log with epochs 0, 2 and 5 (one batch), left open: a crash image. */
  async function epochImage(): Promise<{ files: Map<string, Buffer>; model: ModelBatch[]; lastSize: number }> {
    const h = openHarness(logConfig({ segmentBytes: 600 }));
    const model: ModelBatch[] = [];
    let lastSize = 0;
    for (const [epoch, count] of [[0, 6], [2, 5], [5, 1]] as const) {
      h.log.setLeaderEpoch(epoch);
      for (let i = 0; i < count; i++) {
        const b = batchOf(2, 80);
        lastSize = b.length;
        const r = append(h.log, b);
        model.push({ base: r.baseOffset, last: r.lastOffset, epoch });
        await h.committer.commit(h.log);
      }
    }
    const files = snapshotDir(h.dir);
    await h.committer.close();
    h.log.deleteAll();
    return { files, model, lastSize };
  }

  function openImage(files: Map<string, Buffer>, edit: (dir: string, names: string[]) => void): { log: PartitionLog; dir: string } {
    const dir = restoreDir(files);
    edit(dir, [...files.keys()].filter((n) => n.endsWith('.log')).sort());
    return { log: PartitionLog.open(dir, logConfig({ segmentBytes: 600 }), testIoBackend(), new Clock().now), dir };
  }

  it('uses the checkpoint when it matches, rebuilds from batch headers when it is missing, damaged or stale, and cuts it with a torn tail', async () => {
    const { files, model, lastSize } = await epochImage();
    const all = expectedEpochs(model);
    assert.deepEqual(all.map((e) => e.epoch), [0, 2, 5]);
    const cases: Array<[string, (dir: string, names: string[]) => void, boolean, ModelBatch[]]> = [
      ['as left', () => {}, false, model],
      ['missing', (d) => unlinkSync(join(d, LEADER_EPOCH_FILE)), true, model],
      ['garbage', (d) => writeFileSync(join(d, LEADER_EPOCH_FILE), 'not a checkpoint'), true, model],
      ['stale', (d) => writeFileSync(join(d, LEADER_EPOCH_FILE), '0\n1\n0 0\n'), true, model],
      ['torn tail', (d, names) => truncateSync(join(d, names.at(-1)!), readFileSync(join(d, names.at(-1)!)).length - lastSize + 10), false, model.slice(0, -1)],
    ];
    for (const [name, edit, rebuilt, batches] of cases) {
      const { log, dir } = openImage(files, edit);
      try {
        assert.equal(log.recovery.rebuiltEpochCache, rebuilt, name);
        assert.deepEqual(log.epochEntries, expectedEpochs(batches), name);
        assert.equal(log.logEndOffset, batches.at(-1)!.last + 1, name);
        assert.deepEqual(LeaderEpochFileEntries(dir), expectedEpochs(batches), `${name}: checkpoint rewritten`);
      } finally {
        log.deleteAll();
      }
    }
  });

  it('finishes a truncation a crash interrupted, whatever part of it had been done', async () => {
    const { files, model } = await epochImage();
    const target = model[3]!.base + 1;
    const boundary = model[3]!.base;
    const kept = model.slice(0, 3);
    const marker = (d: string): void => writeFileSync(join(d, TRUNCATION_FILE), `0\n1\n${target}\n`);
    const cases: Array<[string, (dir: string, names: string[]) => void]> = [
      ['target written only', marker],
      ['segments past the target deleted', (d, names) => {
        marker(d);
        for (const n of names.filter((x) => Number(x.slice(0, 20)) > target)) unlinkSync(join(d, n));
      }],
    ];
    for (const [name, edit] of cases) {
      const { log, dir } = openImage(files, edit);
      try {
        assert.equal(log.recovery.finishedTruncationAt, boundary, name);
        assert.equal(existsSync(join(dir, TRUNCATION_FILE)), false, name);
        assert.deepEqual(spans(log), kept.map((b) => [b.base, b.last]), name);
        assert.deepEqual(log.epochEntries, expectedEpochs(kept), name);
        assert.equal(append(log, batchOf(1, 1)).baseOffset, boundary, name);
      } finally {
        log.deleteAll();
      }
    }
  });
});

function LeaderEpochFileEntries(dir: string): EpochEntry[] {
  const lines = readFileSync(join(dir, LEADER_EPOCH_FILE), 'latin1').trim().split('\n').slice(2);
  return lines.map((l) => {
    const [epoch, startOffset] = l.split(' ').map(Number);
    return { epoch: epoch!, startOffset: startOffset! };
  });
}
