// The quorum-state file: round trip, a fresh node without one, a damaged one refused (never read
// as fresh), a torn temporary from a crash ignored, and saves landing in call order.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { ErrorCode } from '../../../../src/protocol/errors.js';
import { QuorumStorageError } from '../../../../src/actors/quorum/quorum_errors.js';
import { encodeQuorumState, FRESH_HARD_STATE, QUORUM_STATE_FILE, QuorumStateFile } from '../../../../src/actors/quorum/quorum_state_file.js';

function withDir<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-quorum-state-'));
  return fn(dir).finally(() => rmSync(dir, { recursive: true, force: true }));
}

const isCorrupt = (e: unknown): boolean => e instanceof QuorumStorageError && e.fault === 'corrupt-quorum-state' && e.code === ErrorCode.KAFKA_STORAGE_ERROR;

describe('QuorumStateFile', () => {
  it('a directory without the file is a fresh node; a saved state reads back after reopen', () =>
    withDir(async (dir) => {
      const { file, state } = QuorumStateFile.open(dir);
      assert.deepEqual(state, FRESH_HARD_STATE);
      await file.save({ epoch: 7, votedFor: 2, leaderId: -1 });
      assert.deepEqual(QuorumStateFile.open(dir).state, { epoch: 7, votedFor: 2, leaderId: -1 });
      assert.deepEqual(JSON.parse(readFileSync(join(dir, QUORUM_STATE_FILE), 'utf8')), { epoch: 7, votedFor: 2, leaderId: -1, version: 0 });
    }));

  it('saves land in call order: the last one wins', () =>
    withDir(async (dir) => {
      const { file } = QuorumStateFile.open(dir);
      await Promise.all([1, 2, 3, 4, 5].map((epoch) => file.save({ epoch, votedFor: epoch % 3, leaderId: epoch })));
      assert.deepEqual(QuorumStateFile.open(dir).state, { epoch: 5, votedFor: 2, leaderId: 5 });
    }));

  it('property: a damaged file (any strict prefix, a flipped byte, a bad field) is a typed error, never a fresh node', () =>
    withDir(async (dir) => {
      const good = encodeQuorumState({ epoch: 12, votedFor: 3, leaderId: 3 });
      const damaged = fc.oneof(
        fc.nat({ max: good.length - 2 }).map((n) => good.subarray(0, n)),
        fc.tuple(fc.nat({ max: good.length - 2 }), fc.integer({ min: 1, max: 255 })).map(([at, x]) => {
          const b = Buffer.from(good);
          b[at] = b[at]! ^ x;
          return b;
        }),
        fc.constantFrom('{"epoch":-1,"votedFor":1,"leaderId":1,"version":0}', '{"epoch":1,"votedFor":1.5,"leaderId":1,"version":0}', '{"epoch":1,"votedFor":1,"leaderId":1,"version":9}', 'null', '[]').map((s) => Buffer.from(s)),
      );
      fc.assert(
        fc.property(damaged, (bytes) => {
          writeFileSync(join(dir, QUORUM_STATE_FILE), bytes);
          let state;
          try {
            state = QuorumStateFile.open(dir).state;
          } catch (e) {
            return isCorrupt(e);
          }
          // A flip that still decodes (one digit to another) must at least not read as a fresh node.
          return state.epoch !== 0 || state.votedFor !== -1 || state.leaderId !== -1;
        }),
      );
      writeFileSync(join(dir, QUORUM_STATE_FILE), '');
      assert.throws(() => QuorumStateFile.open(dir), isCorrupt);
    }));

  it('a torn quorum-state.tmp from a crash before its rename is ignored and removed', () =>
    withDir(async (dir) => {
      const { file } = QuorumStateFile.open(dir);
      await file.save({ epoch: 4, votedFor: 1, leaderId: 1 });
      const next = encodeQuorumState({ epoch: 5, votedFor: 2, leaderId: -1 });
      writeFileSync(join(dir, QUORUM_STATE_FILE + '.tmp'), next.subarray(0, 9));
      assert.deepEqual(QuorumStateFile.open(dir).state, { epoch: 4, votedFor: 1, leaderId: 1 });
      assert.equal(existsSync(join(dir, QUORUM_STATE_FILE + '.tmp')), false);
    }));
});
