// The clean-shutdown record (clean_shutdown.ts) and the staged close that feeds it: its encoding
// (round trip; any damage reads as no record), a stop that creates no file in a partition's
// directory, and the crash points: no record written, a torn record, a record older than the
// files, a crash after the start took the record, and a marker left by a log closed alone.
// Each partition there is either trusted on a complete record or recovered by a rescan, with
// every committed batch kept.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, readFileSync, truncateSync } from 'node:fs';
import { join } from 'node:path';
import { it } from 'node:test';
import fc from 'fast-check';
import { closeLogsTogether } from '../../../src/log/clean_close.js';
import {
  CleanShutdownEntries,
  cleanShutdownFile,
  decodeCleanShutdown,
  encodeCleanShutdown,
  writeCleanShutdown,
  type CleanCloseEntry,
} from '../../../src/log/clean_shutdown.js';
import { readCheckpoint } from '../../../src/log/log_checkpoint.js';
import type { StorageError } from '../../../src/log/io_backend.js';
import type { PartitionLog } from '../../../src/log/partition_log.js';
import { validateProducedBatch } from '../../../src/protocol/record_batch.js';
import { append, batchOf, logConfig, openHarness, readAll, removeDir, tempDir, type LogHarness } from './log_fixture.js';

const blob = fc.option(fc.uint8Array({ maxLength: 40 }).map((a) => Buffer.from(a)), { nil: null });
const offset = fc.nat({ max: 2 ** 40 });
const entryArb = fc
  .record({ name: fc.stringMatching(/^[a-z][a-z0-9._-]{0,30}$/), a: offset, b: offset, c: offset, d: offset, activeSize: fc.nat({ max: 2 ** 31 }) })
  .chain((r) => {
    const [logStartOffset, highWatermark, activeBase, logEndOffset] = [r.a, r.b, r.c, r.d].sort((x, y) => x - y) as [number, number, number, number];
    return fc.record({ offsetIndex: blob, timeIndex: blob, snapshot: blob, epochs: blob }).map(
      (inline): CleanCloseEntry => ({ dir: join('/data', r.name), logStartOffset, logEndOffset, highWatermark, activeBase, activeSize: r.activeSize, ...inline }),
    );
  });
const entriesArb = fc.uniqueArray(entryArb, { maxLength: 8, selector: (e) => e.dir });

it('a record decodes to the entries it was encoded from', () => {
  fc.assert(fc.property(entriesArb, (entries) => assert.deepEqual(decodeCleanShutdown(encodeCleanShutdown(entries), '/data'), entries)));
});

it('a truncated, extended or altered record reads as no record', () => {
  fc.assert(
    fc.property(entriesArb, fc.nat(), fc.integer({ min: 1, max: 255 }), (entries, at, flip) => {
      const buf = encodeCleanShutdown(entries);
      assert.equal(decodeCleanShutdown(buf.subarray(0, at % buf.length), '/data'), null);
      assert.equal(decodeCleanShutdown(Buffer.concat([buf, Buffer.alloc(1)]), '/data'), null);
      const altered = Buffer.from(buf);
      altered[at % buf.length] ^= flip;
      assert.equal(decodeCleanShutdown(altered, '/data'), null);
    }),
  );
});

/** Partition logs in a log directory of their own (the record is written next to them). */
class LogDir {
  readonly path = tempDir();
  readonly harnesses: LogHarness[] = [];

  open(name: string, entries?: CleanShutdownEntries): LogHarness {
    const dir = join(this.path, name);
    mkdirSync(dir, { recursive: true });
    const h = openHarness(logConfig(), { kind: 'always' }, dir, { cleanShutdown: entries?.claim(dir) ?? null });
    this.harnesses.push(h);
    return h;
  }

  /** Closes the logs together as a shard's stop does; the record is written when `record`. */
  async stop(logs: PartitionLog[], record = true): Promise<CleanCloseEntry[]> {
    const errors: StorageError[] = [];
    const entries = await closeLogsTogether(logs, this.harnesses[0]!.io, (err) => errors.push(err));
    assert.deepEqual(errors, []);
    if (record) writeCleanShutdown(0, entries);
    return entries;
  }

  async dispose(): Promise<void> {
    for (const h of this.harnesses) await h.dispose().catch(() => undefined);
    removeDir(this.path);
  }
}

/** Two logs with committed batches (one from an idempotent producer), as a stop finds them. */
async function twoWrittenLogs(d: LogDir): Promise<[LogHarness, LogHarness]> {
  const a = d.open('t-0');
  const b = d.open('t-1');
  append(a.log, batchOf(2, 50));
  append(a.log, batchOf(3, 50, { producerId: 7, producerEpoch: 0, baseSequence: 0 }));
  append(b.log, batchOf(1, 10));
  await a.committer.commit(a.log);
  await b.committer.commit(b.log);
  a.log.updateHighWatermark(5);
  b.log.updateHighWatermark(1);
  return [a, b];
}

/** Appends `batch` and says how the log took it (a retry of an idempotent batch is a duplicate). */
function appendKind(log: PartitionLog, batch: Buffer): string {
  const v = validateProducedBatch(batch, 1 << 30);
  assert.ok(v.ok);
  return log.appendBatch(batch, v.header).kind;
}

const bytesOf = (log: PartitionLog): Buffer[] => readAll(log).map((batch) => batch.bytes);

it('a stop creates no file in a written partition\'s directory, and the restart trusts the record: no rescan, same data and state', async () => {
  const d = new LogDir();
  try {
    const [a, b] = await twoWrittenLogs(d);
    const before = [readdirSync(a.dir).sort(), readdirSync(b.dir).sort()];
    const records = [bytesOf(a.log), bytesOf(b.log)];
    const entries = await d.stop([a.log, b.log]);
    assert.equal(entries.length, 2);
    assert.deepEqual([readdirSync(a.dir).sort(), readdirSync(b.dir).sort()], before);
    assert.deepEqual(readdirSync(d.path).filter((n) => n.startsWith('clean-shutdown-')), [cleanShutdownFile(0)]);

    const found = CleanShutdownEntries.take(d.path);
    assert.equal(found.size, 2);
    const ra = d.open('t-0', found).log;
    const rb = d.open('t-1', found).log;
    for (const [log, hw, data] of [[ra, 5, records[0]], [rb, 1, records[1]]] as const) {
      assert.equal(log.recovery.clean, true);
      assert.equal(log.recovery.scannedSegments, 0);
      assert.equal(log.recovery.replayedBatches, 0);
      assert.equal(log.highWatermark, hw);
      assert.deepEqual(bytesOf(log), data);
    }
    // The producer state came back from the record: a retried batch is a duplicate.
    assert.equal(appendKind(ra, batchOf(3, 50, { producerId: 7, producerEpoch: 0, baseSequence: 0 })), 'duplicate');
  } finally {
    await d.dispose();
  }
});

it('a stop cut short before the record is written leaves logs that reopen by a rescan, with every batch', async () => {
  const d = new LogDir();
  try {
    const [a] = await twoWrittenLogs(d);
    const records = bytesOf(a.log);
    await d.stop([a.log], false);
    const log = d.open('t-0', CleanShutdownEntries.take(d.path)).log;
    assert.equal(log.recovery.clean, false);
    assert.ok(log.recovery.scannedSegments > 0);
    assert.deepEqual(bytesOf(log), records);
  } finally {
    await d.dispose();
  }
});

it('a topic named clean-shutdown lives beside the records: its partition directory is neither written over nor taken as one', async () => {
  const d = new LogDir();
  try {
    const [a] = await twoWrittenLogs(d);
    // Topic "clean-shutdown", partition 0.
    const other = d.open('clean-shutdown-0');
    await d.stop([a.log, other.log]);
    const found = CleanShutdownEntries.take(d.path);
    assert.equal(found.size, 2);
    assert.equal(d.open('clean-shutdown-0', found).log.recovery.clean, true);
  } finally {
    await d.dispose();
  }
});

it('a damaged record trusts nothing', async () => {
  const d = new LogDir();
  try {
    const [a] = await twoWrittenLogs(d);
    await d.stop([a.log]);
    const path = join(d.path, cleanShutdownFile(0));
    truncateSync(path, readFileSync(path).length - 1);
    const found = CleanShutdownEntries.take(d.path);
    assert.equal(found.size, 0);
    assert.equal(existsSync(path), false);
    assert.equal(d.open('t-0', found).log.recovery.clean, false);
  } finally {
    await d.dispose();
  }
});

it('an entry whose active segment is no longer as recorded is not trusted', async () => {
  const d = new LogDir();
  try {
    const [a] = await twoWrittenLogs(d);
    const [entry] = await d.stop([a.log], false);
    const log = d.open('t-0').log;
    append(log, batchOf(2, 20));
    await d.harnesses.at(-1)!.committer.commit(log);
    const records = bytesOf(log);
    await d.harnesses.at(-1)!.committer.close();
    // A record from before these appends (it could only be left by a start that did not take it).
    writeCleanShutdown(0, [entry!]);
    const reopened = d.open('t-0', CleanShutdownEntries.take(d.path)).log;
    assert.equal(reopened.recovery.clean, false);
    assert.deepEqual(bytesOf(reopened), records);
  } finally {
    await d.dispose();
  }
});

it('the start takes the record away: a crash after the logs changed recovers them by a rescan', async () => {
  const d = new LogDir();
  try {
    const [a] = await twoWrittenLogs(d);
    await d.stop([a.log]);
    const h = d.open('t-0', CleanShutdownEntries.take(d.path));
    append(h.log, batchOf(2, 20));
    await h.committer.commit(h.log);
    const records = bytesOf(h.log);
    // A crash: the log is never closed; the next start reads what is on disk.
    const after = d.open('t-0', CleanShutdownEntries.take(d.path)).log;
    assert.equal(after.recovery.clean, false);
    assert.deepEqual(bytesOf(after), records);
  } finally {
    await d.dispose();
  }
});

it('a marker left by a log closed alone is trusted once, and made durably unclean by the open', async () => {
  const d = new LogDir();
  try {
    const [a] = await twoWrittenLogs(d);
    const records = bytesOf(a.log);
    await a.committer.close();
    a.log.close();
    assert.equal(readCheckpoint(a.dir)?.clean, true);
    const log = d.open('t-0').log;
    assert.equal(log.recovery.clean, true);
    assert.equal(log.recovery.scannedSegments, 0);
    assert.equal(readCheckpoint(a.dir)?.clean, false);
    // A crash now: the next open must not trust the old marker.
    const again = d.open('t-0').log;
    assert.equal(again.recovery.clean, false);
    assert.deepEqual(bytesOf(again), records);
  } finally {
    await d.dispose();
  }
});

it('state beyond the inline budget is written as a durable file and read back from it', async () => {
  const d = new LogDir();
  try {
    const a = d.open('t-0');
    // Many producers make a snapshot larger than an entry may carry.
    for (let p = 0; p < 64; p++) append(a.log, batchOf(1, 5, { producerId: 100 + p, producerEpoch: 0, baseSequence: 0 }));
    await a.committer.commit(a.log);
    const [entry] = await d.stop([a.log]);
    assert.equal(entry!.snapshot, null);
    assert.ok(readdirSync(a.dir).some((n) => n === '00000000000000000064.snapshot'));
    const log = d.open('t-0', CleanShutdownEntries.take(d.path)).log;
    assert.equal(log.recovery.clean, true);
    assert.equal(log.recovery.snapshotOffset, 64);
    assert.equal(appendKind(log, batchOf(1, 5, { producerId: 163, producerEpoch: 0, baseSequence: 0 })), 'duplicate');
  } finally {
    await d.dispose();
  }
});
