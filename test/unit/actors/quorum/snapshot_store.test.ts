// Snapshots on disk: saved whole or in chunks, read back in chunks for FetchSnapshot, older ones
// deleted once a newer one is in force, partial files from a crash removed with the previous
// snapshot still in force, and damaged files refused in favour of an older valid one.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { ErrorCode, KafkaError } from '../../../../src/protocol/errors.js';
import { decodeVoterEndpoints, decodeVoters, encodeVoters } from '../../../../src/coordinator/raft/entry_batches.js';
import { crc32c } from '../../../../src/protocol/record_batch.js';
import type { Snapshot } from '../../../../src/coordinator/raft/types.js';
import { QuorumStorageError } from '../../../../src/actors/quorum/quorum_errors.js';
import { encodeSnapshot, partFileName, snapshotFileName } from '../../../../src/actors/quorum/snapshot_file.js';
import { SnapshotStore } from '../../../../src/actors/quorum/snapshot_store.js';

async function withDir<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-snapshots-'));
  try {
    return await fn(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function snapshot(endOffset: number, epoch: number, size: number, voters = [1, 2, 3]): Snapshot {
  const data = Buffer.alloc(size);
  for (let i = 0; i < size; i++) data[i] = (i * 31 + endOffset) & 0xff;
  return { meta: { id: { endOffset, epoch }, votersRecord: encodeVoters(voters), size }, data };
}

async function readWhole(store: SnapshotStore, s: Snapshot, chunk: number): Promise<Buffer> {
  const parts: Uint8Array[] = [];
  for (let pos = 0; pos < s.meta.size; ) {
    const c = await store.read(s.meta.id, pos, chunk);
    assert.deepEqual(c.meta, s.meta);
    assert.ok(c.bytes.length > 0 && c.bytes.length <= chunk);
    parts.push(c.bytes);
    pos += c.bytes.length;
  }
  return Buffer.concat(parts);
}

const codeIs = (code: number) => (e: unknown): boolean => e instanceof KafkaError && e.code === code;

describe('SnapshotStore', () => {
  it('saves a snapshot, reads it in chunks, keeps only the newest and loads it on reopen', () =>
    withDir(async (dir) => {
      const first = SnapshotStore.open(dir);
      assert.equal(first.latest, null);
      const older = snapshot(100, 2, 5000);
      const newer = snapshot(250, 3, 70_000, [1, 4]);
      await first.store.save(older);
      await first.store.save(newer);
      assert.deepEqual(readdirSync(dir), [snapshotFileName(newer.meta.id)]);
      assert.equal(snapshotFileName(newer.meta.id), '00000000000000000250-0000000003.checkpoint');
      const again = SnapshotStore.open(dir);
      assert.deepEqual(again.latest?.meta, newer.meta);
      assert.ok(Buffer.from(again.latest!.data).equals(newer.data));
      assert.ok((await readWhole(again.store, newer, 4096)).equals(newer.data));
      await assert.rejects(again.store.read(older.meta.id, 0, 10), codeIs(ErrorCode.SNAPSHOT_NOT_FOUND));
      await assert.rejects(again.store.read(newer.meta.id, newer.meta.size + 1, 10), codeIs(ErrorCode.POSITION_OUT_OF_RANGE));
      assert.equal((await again.store.read(newer.meta.id, newer.meta.size, 10)).bytes.length, 0);
    }));

  it('property: a snapshot arriving in chunks of any sizes freezes to the same file as a whole save', () =>
    withDir(async (dir) => {
      const { store } = SnapshotStore.open(dir);
      await fc.assert(
        fc.asyncProperty(fc.integer({ min: 0, max: 20_000 }), fc.array(fc.integer({ min: 1, max: 5000 }), { minLength: 1, maxLength: 30 }), async (size, cuts) => {
          const s = snapshot(1000 + size, 1, size);
          const writer = await store.writer(s.meta);
          for (let pos = 0, i = 0; pos < size; i++) {
            const end = Math.min(size, pos + cuts[i % cuts.length]!);
            await writer.append(pos, s.data.subarray(pos, end));
            pos = end;
          }
          await writer.freeze();
          assert.ok(readFileSync(join(dir, snapshotFileName(s.meta.id))).equals(encodeSnapshot(s)));
          assert.deepEqual(store.latest, s.meta);
        }),
        { numRuns: 40 },
      );
    }));

  it('keeps the voters\' endpoints, and still loads and serves a version 1 file that holds voter ids only', () =>
    withDir(async (dir) => {
      const endpoints = new Map([[4, [{ name: 'CONTROLLER', host: 'node-4.example', port: 9094 }]]]);
      const withEndpoints = snapshot(100, 2, 3000);
      const s: Snapshot = { ...withEndpoints, meta: { ...withEndpoints.meta, votersRecord: encodeVoters([1, 2, 3, 4], endpoints) } };
      await SnapshotStore.open(dir).store.save(s);
      const reopened = SnapshotStore.open(dir);
      assert.deepEqual(decodeVoterEndpoints(reopened.latest!.meta.votersRecord), endpoints);

      // Version 1, as older Sluice wrote it: count and ids where version 2 has the VotersRecord.
      const old = snapshot(200, 3, 5000);
      const ids = [1, 2, 5];
      const header = Buffer.alloc(37 + 4 * ids.length);
      let pos = header.writeUInt32BE(0x534c534e, 0);
      pos = header.writeUInt8(1, pos);
      pos = header.writeBigInt64BE(200n, pos);
      pos = header.writeInt32BE(3, pos);
      pos = header.writeUInt32BE(ids.length, pos);
      for (const id of ids) pos = header.writeInt32BE(id, pos);
      pos = header.writeBigInt64BE(BigInt(old.meta.size), pos);
      pos = header.writeUInt32BE(crc32c(old.data), pos);
      header.writeUInt32BE(crc32c(header.subarray(0, pos)), pos);
      writeFileSync(join(dir, snapshotFileName(old.meta.id)), Buffer.concat([header, old.data]));
      const legacy = SnapshotStore.open(dir);
      assert.deepEqual(legacy.refused, []);
      assert.deepEqual(legacy.latest?.meta.id, old.meta.id);
      assert.deepEqual(decodeVoters(legacy.latest!.meta.votersRecord), ids);
      assert.deepEqual(decodeVoterEndpoints(legacy.latest!.meta.votersRecord), new Map());
      assert.ok(Buffer.from(legacy.latest!.data).equals(old.data));
      assert.ok((await readWhole(legacy.store, { ...old, meta: legacy.latest!.meta }, 777)).equals(old.data), 'chunks are read past the shorter header');
    }));

  it('a chunk that does not continue the data, overruns it, or a freeze before the end is POSITION_OUT_OF_RANGE', () =>
    withDir(async (dir) => {
      const { store } = SnapshotStore.open(dir);
      const s = snapshot(10, 1, 100);
      const writer = await store.writer(s.meta);
      await writer.append(0, s.data.subarray(0, 40));
      await assert.rejects(writer.append(50, s.data.subarray(50, 60)), codeIs(ErrorCode.POSITION_OUT_OF_RANGE));
      await assert.rejects(writer.append(40, Buffer.alloc(61)), codeIs(ErrorCode.POSITION_OUT_OF_RANGE));
      await assert.rejects(writer.freeze(), codeIs(ErrorCode.POSITION_OUT_OF_RANGE));
      await writer.abort();
      assert.deepEqual(readdirSync(dir), []);
      assert.equal(store.latest, null);
    }));

  it('a crash between the .part and its rename leaves the previous snapshot in force and the .part removed', () =>
    withDir(async (dir) => {
      const { store } = SnapshotStore.open(dir);
      const old = snapshot(100, 2, 3000);
      await store.save(old);
      const next = snapshot(200, 2, 3000);
      // A complete part whose rename never happened, and a torn one.
      writeFileSync(join(dir, partFileName(next.meta.id)), encodeSnapshot(next));
      const torn = snapshot(300, 3, 3000);
      writeFileSync(join(dir, partFileName(torn.meta.id)), encodeSnapshot(torn).subarray(0, 1234));
      const reopened = SnapshotStore.open(dir);
      assert.deepEqual(reopened.latest?.meta, old.meta);
      assert.deepEqual(reopened.refused, []);
      assert.deepEqual(readdirSync(dir), [snapshotFileName(old.meta.id)]);
    }));

  it('property: a damaged newest snapshot (torn or a flipped byte) is refused with a typed error and the previous one is used', () =>
    withDir(async (dir) => {
      const old = snapshot(100, 2, 2000);
      const newest = snapshot(200, 3, 2000, [1, 2]);
      const bytes = encodeSnapshot(newest);
      const damage = fc.oneof(
        fc.nat({ max: bytes.length - 1 }).map((n) => ({ truncate: n, flip: -1, xor: 0 })),
        fc.tuple(fc.nat({ max: bytes.length - 1 }), fc.integer({ min: 1, max: 255 })).map(([flip, xor]) => ({ truncate: -1, flip, xor })),
      );
      await fc.assert(
        fc.asyncProperty(damage, async ({ truncate, flip, xor }) => {
          for (const name of readdirSync(dir)) rmSync(join(dir, name));
          await SnapshotStore.open(dir).store.save(old);
          const path = join(dir, snapshotFileName(newest.meta.id));
          writeFileSync(path, bytes);
          if (truncate >= 0) truncateSync(path, truncate);
          else {
            const b = readFileSync(path);
            b[flip] = b[flip]! ^ xor;
            writeFileSync(path, b);
          }
          const opened = SnapshotStore.open(dir);
          assert.deepEqual(opened.latest?.meta, old.meta);
          assert.equal(opened.refused.length, 1);
          assert.ok(opened.refused[0] instanceof QuorumStorageError && opened.refused[0].fault === 'corrupt-snapshot');
          assert.equal(opened.refused[0].code, ErrorCode.KAFKA_STORAGE_ERROR);
        }),
        { numRuns: 60 },
      );
      assert.ok(existsSync(join(dir, snapshotFileName(newest.meta.id))));
    }));
});
