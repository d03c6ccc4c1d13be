// One quorum node's storage end to end on real files: Readies persisted and restored, exact
// truncation followed by older epochs, snapshot install and compaction, and the crash states a
// restart must repair (torn log tail, torn quorum-state.tmp, snapshot .part never renamed,
// snapshot installed before the log reset, compaction before its segment deletes).
import assert from 'node:assert/strict';
import { cpSync, existsSync, mkdtempSync, readdirSync, renameSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { encodeVoters } from '../../../../src/coordinator/raft/entry_batches.js';
import type { Entry, Ready, Snapshot } from '../../../../src/coordinator/raft/types.js';
import { QuorumStorageError } from '../../../../src/actors/quorum/quorum_errors.js';
import { FRESH_HARD_STATE, QUORUM_STATE_FILE } from '../../../../src/actors/quorum/quorum_state_file.js';
import { METADATA_LOG_NAME, openQuorumStorage, type OpenedQuorumStorage } from '../../../../src/actors/quorum/quorum_storage.js';
import { encodeSnapshot, partFileName, snapshotFileName } from '../../../../src/actors/quorum/snapshot_file.js';
import { testIoBackend } from '../../log/log_fixture.js';

const VOTERS = [1, 2, 3];

function tempDir(): string {
  return mkdtempSync(join(tmpdir(), 'sluice-quorum-storage-'));
}

function open(dir: string, segmentBytes = 1 << 20): OpenedQuorumStorage {
  return openQuorumStorage(dir, { bootstrapVoters: VOTERS, io: testIoBackend(), segmentBytes, now: () => 1_700_000_000_000 });
}

/** Entries [from, from + count) of one epoch: a leaderChange first when `leaderChange`, then data (a voters entry every 7th). */
function entries(from: number, count: number, epoch: number, leaderChange = false): Entry[] {
  return Array.from({ length: count }, (_, i): Entry => {
    const offset = from + i;
    if (leaderChange && i === 0) return { offset, epoch, kind: 'leaderChange', data: new Uint8Array(0) };
    if (offset % 7 === 6) return { offset, epoch, kind: 'voters', data: encodeVoters(VOTERS) };
    return { offset, epoch, kind: 'data', data: Uint8Array.from({ length: 1 + (offset % 40) }, (_, j) => (offset * 13 + j) & 0xff) };
  });
}

function ready(parts: Partial<Ready>): Ready {
  return { hardState: null, truncateTo: null, snapshot: null, entries: [], messages: [], committed: [], ...parts };
}

function snapshot(endOffset: number, epoch: number, size = 3000): Snapshot {
  return { meta: { id: { endOffset, epoch }, votersRecord: encodeVoters(VOTERS), size }, data: Uint8Array.from({ length: size }, (_, i) => (i * 7 + endOffset) & 0xff) };
}

function logDir(dir: string): string {
  return join(dir, METADATA_LOG_NAME);
}

async function withDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = tempDir();
  try {
    await fn(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('QuorumStorage', () => {
  it('a fresh directory restores a fresh node; persisted Readies restore the same election state and entries', () =>
    withDir(async (dir) => {
      const first = open(dir);
      assert.deepEqual(first.restore, { hardState: FRESH_HARD_STATE, snapshot: null, entries: [], bootstrapVoters: VOTERS });
      const log = [...entries(0, 10, 1, true), ...entries(10, 15, 2, true)];
      await first.storage.persist(ready({ hardState: { epoch: 1, votedFor: 1, leaderId: 1 }, entries: log.slice(0, 10) }));
      await first.storage.persist(ready({ hardState: { epoch: 2, votedFor: 2, leaderId: 2 }, entries: log.slice(10) }));
      assert.equal(first.storage.logEndOffset, 25);
      await first.storage.close();
      const again = open(dir);
      assert.deepEqual(again.restore, { hardState: { epoch: 2, votedFor: 2, leaderId: 2 }, snapshot: null, entries: log, bootstrapVoters: VOTERS });
      await again.storage.close();
    }));

  it('truncation is exact at any offset and older epochs follow it; appends that do not continue the log are refused', () =>
    withDir(async (dir) => {
      const { storage } = open(dir);
      await storage.append([...entries(0, 6, 1, true), ...entries(6, 6, 3, true)]);
      await assert.rejects(storage.append(entries(13, 1, 3)), (e: unknown) => e instanceof QuorumStorageError && e.fault === 'log-mismatch');
      await storage.persist(ready({ truncateTo: 9 }));
      assert.equal(storage.logEndOffset, 9);
      await storage.truncateTo(6);
      // The new leader's log had epoch 2 where this one had epoch 3.
      const tail = [...entries(6, 3, 2, true), ...entries(9, 4, 4, true)];
      await storage.persist(ready({ entries: tail }));
      await storage.close();
      const again = open(dir);
      assert.deepEqual(again.restore.entries, [...entries(0, 6, 1, true), ...tail]);
      await again.storage.close();
    }));

  it('an installed snapshot replaces the whole log; appends continue at its end and restore after it', () =>
    withDir(async (dir) => {
      const { storage } = open(dir);
      await storage.append(entries(0, 12, 1, true));
      const s = snapshot(40, 5);
      await storage.persist(ready({ hardState: { epoch: 6, votedFor: -1, leaderId: 3 }, snapshot: s, entries: entries(40, 3, 6, true) }));
      assert.deepEqual([storage.logStartOffset, storage.logEndOffset], [40, 43]);
      await storage.close();
      const again = open(dir);
      assert.deepEqual(again.restore.snapshot?.meta, s.meta);
      assert.deepEqual(Buffer.from(again.restore.snapshot!.data), Buffer.from(s.data));
      assert.deepEqual(again.restore.entries, entries(40, 3, 6, true));
      assert.deepEqual(readdirSync(dir).sort(), [METADATA_LOG_NAME, snapshotFileName(s.meta.id), QUORUM_STATE_FILE].sort());
      await again.storage.close();
    }));

  it('compaction puts the snapshot in force, deletes older ones and the segments below it, and restores the entries after it', () =>
    withDir(async (dir) => {
      const { storage } = open(dir, 600);
      const log = [...entries(0, 30, 1, true), ...entries(30, 30, 2, true)];
      await storage.append(log);
      const segmentsBefore = readdirSync(logDir(dir)).filter((n) => n.endsWith('.log')).length;
      await storage.compact(snapshot(20, 1));
      await storage.compact(snapshot(45, 2));
      await assert.rejects(storage.compact(snapshot(61, 2)), RangeError);
      assert.ok(storage.logStartOffset > 20 && storage.logStartOffset <= 45, `log start ${storage.logStartOffset}`);
      assert.ok(readdirSync(logDir(dir)).filter((n) => n.endsWith('.log')).length < segmentsBefore);
      assert.deepEqual(readdirSync(dir).filter((n) => n.endsWith('.checkpoint')), [snapshotFileName({ endOffset: 45, epoch: 2 })]);
      await storage.close();
      const again = open(dir, 600);
      assert.deepEqual(again.restore.snapshot?.meta.id, { endOffset: 45, epoch: 2 });
      assert.deepEqual(again.restore.entries, log.slice(45));
      await again.storage.close();
    }));

  it('operations run in call order without the caller awaiting each', () =>
    withDir(async (dir) => {
      const { storage } = open(dir);
      const appended = storage.persist(ready({ entries: entries(0, 5, 1, true) }));
      const truncated = storage.truncateTo(2);
      const more = storage.append(entries(2, 3, 2, true));
      await Promise.all([appended, truncated, more]);
      await storage.close();
      const again = open(dir);
      assert.deepEqual(again.restore.entries, [...entries(0, 2, 1, true), ...entries(2, 3, 2, true)]);
      await again.storage.close();
    }));

  it('a snapshot chunk read and a snapshot written in chunks go through the storage', () =>
    withDir(async (dir) => {
      const { storage } = open(dir);
      await storage.append(entries(0, 5, 1, true));
      const s = snapshot(9, 2, 10_000);
      const writer = await storage.snapshotWriter(s.meta);
      for (let pos = 0; pos < s.meta.size; pos += 4096) await writer.append(pos, s.data.subarray(pos, pos + 4096));
      await writer.freeze();
      await storage.installSnapshot(s);
      assert.deepEqual([storage.logStartOffset, storage.logEndOffset], [9, 9]);
      const chunk = await storage.readSnapshot(s.meta.id, 5000, 100);
      assert.deepEqual(Buffer.from(chunk.bytes), Buffer.from(s.data.subarray(5000, 5100)));
      await storage.close();
    }));
});

describe('QuorumStorage after a crash', () => {
  it('property: a torn log tail reopens to a valid prefix that keeps every acknowledged entry; torn quorum-state.tmp and snapshot .part are ignored', async () => {
    const scenario = fc.record({
      acked: fc.array(fc.integer({ min: 1, max: 8 }), { minLength: 1, maxLength: 5 }),
      unacked: fc.integer({ min: 1, max: 10 }),
      tornAt: fc.double({ min: 0, max: 1, noNaN: true }),
    });
    await fc.assert(
      fc.asyncProperty(scenario, async ({ acked, unacked, tornAt }) => {
        const live = tempDir();
        const crashed = tempDir();
        try {
          const { storage } = open(live);
          const old = snapshot(0, 0, 10);
          await storage.saveHardState({ epoch: 3, votedFor: 2, leaderId: 2 });
          let end = 0;
          let epoch = 1;
          const written: Entry[] = [];
          for (const n of acked) {
            const batch = entries(end, n, epoch++, true);
            await storage.persist(ready({ entries: batch }));
            written.push(...batch);
            end += n;
          }
          const segment = join(logDir(live), '00000000000000000000.log');
          const ackedBytes = statSync(segment).size;
          const more = entries(end, unacked, epoch, true);
          await storage.append(more);
          const fullBytes = statSync(segment).size;
          // The crash: no clean close; the copy is what the disk held, with the tail torn.
          cpSync(live, crashed, { recursive: true });
          truncateSync(join(logDir(crashed), '00000000000000000000.log'), ackedBytes + Math.floor(tornAt * (fullBytes - ackedBytes)));
          writeFileSync(join(crashed, QUORUM_STATE_FILE + '.tmp'), '{"epoch":4,"vo');
          writeFileSync(join(crashed, partFileName({ endOffset: 5, epoch: 9 })), encodeSnapshot(old).subarray(0, 20));
          const reopened = open(crashed);
          const got = reopened.restore.entries;
          assert.ok(got.length >= written.length, `lost acknowledged entries: ${got.length} < ${written.length}`);
          assert.deepEqual(got, [...written, ...more].slice(0, got.length));
          assert.deepEqual(reopened.restore.hardState, { epoch: 3, votedFor: 2, leaderId: 2 });
          assert.equal(reopened.restore.snapshot, null);
          // The log goes on from the recovered end.
          await reopened.storage.append(entries(got.length, 2, epoch + 1, true));
          await reopened.storage.close();
          await storage.close();
        } finally {
          rmSync(live, { recursive: true, force: true });
          rmSync(crashed, { recursive: true, force: true });
        }
      }),
      { numRuns: 25 },
    );
  });

  it('a snapshot installed before the log was reset: the log is reset at open when it does not hold the snapshot id, kept when it does', () =>
    withDir(async (dir) => {
      const first = open(dir);
      await first.storage.append([...entries(0, 10, 1, true), ...entries(10, 10, 2, true)]);
      await first.storage.close();
      // Crash after the snapshot's rename, before the reset: a snapshot whose id the log does not hold.
      writeFileSync(join(dir, snapshotFileName({ endOffset: 15, epoch: 3 })), encodeSnapshot(snapshot(15, 3)));
      const reset = open(dir);
      assert.deepEqual([reset.restore.snapshot?.meta.id.endOffset, reset.restore.entries.length, reset.storage.logStartOffset], [15, 0, 15]);
      await reset.storage.append(entries(15, 10, 3, true));
      await reset.storage.close();
      // A compaction that crashed before deleting segments: the snapshot id is in the log, which is kept after it.
      writeFileSync(join(dir, snapshotFileName({ endOffset: 20, epoch: 3 })), encodeSnapshot(snapshot(20, 3)));
      const kept = open(dir);
      assert.deepEqual(kept.restore.snapshot?.meta.id, { endOffset: 20, epoch: 3 });
      assert.deepEqual(kept.restore.entries, entries(15, 10, 3, true).slice(5));
      await kept.storage.close();
    }));

  it('a reset interrupted after the old log was renamed aside: the aside directory goes and the log starts at the snapshot', () =>
    withDir(async (dir) => {
      const first = open(dir);
      await first.storage.append(entries(0, 10, 1, true));
      await first.storage.close();
      writeFileSync(join(dir, snapshotFileName({ endOffset: 30, epoch: 2 })), encodeSnapshot(snapshot(30, 2)));
      renameSync(logDir(dir), logDir(dir) + '.deleting');
      const reopened = open(dir);
      assert.deepEqual([reopened.restore.entries.length, reopened.storage.logStartOffset, reopened.storage.logEndOffset], [0, 30, 30]);
      assert.equal(existsSync(logDir(dir) + '.deleting'), false);
      await reopened.storage.close();
    }));

  it('a log that does not reach back to the snapshot in force is a typed error, not a silent gap', () =>
    withDir(async (dir) => {
      const first = open(dir, 600);
      await first.storage.append(entries(0, 60, 1, true));
      await first.storage.compact(snapshot(40, 1));
      await first.storage.close();
      rmSync(join(dir, snapshotFileName({ endOffset: 40, epoch: 1 })));
      assert.throws(() => open(dir, 600), (e: unknown) => e instanceof QuorumStorageError && e.fault === 'log-gap');
    }));
});
