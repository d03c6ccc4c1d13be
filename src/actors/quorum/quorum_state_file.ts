// The metadata quorum's durable election state, `quorum-state` in the metadata log directory:
// JSON {epoch, votedFor, leaderId, version}, replaced atomically and durably (written to
// `quorum-state.tmp`, fsync'd, renamed, directory fsync'd; cluster.md §1.7) before any message
// that depends on it leaves the node. Read synchronously once at open, written asynchronously
// (libuv's pool) by the quorum driver's thread.
// Invariants: a missing file is a fresh node; a damaged file is a QuorumStorageError, never a
// fresh node (that could vote twice in one epoch); a leftover `.tmp` (a crash before its rename)
// is ignored and removed; saves land in call order.
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { HardState } from '../../coordinator/raft/types.js';
import { replaceFileDurably } from './durable_file.js';
import { QuorumStorageError } from './quorum_errors.js';

export const QUORUM_STATE_FILE = 'quorum-state';
const TMP_SUFFIX = '.tmp';
const VERSION = 0;
/** A node that never voted nor heard of a leader. */
export const FRESH_HARD_STATE: HardState = { epoch: 0, votedFor: -1, leaderId: -1 };
const MAX_EPOCH = 0x7fffffff;

function isId(v: unknown): v is number {
  return Number.isSafeInteger(v) && (v as number) >= -1 && (v as number) <= MAX_EPOCH;
}

/** The state in a file's bytes, or why they are not one. */
export function decodeQuorumState(bytes: Buffer): HardState | string {
  let json: unknown;
  try {
    json = JSON.parse(bytes.toString('utf8'));
  } catch (err) {
    return `not JSON (${(err as Error).message})`;
  }
  if (typeof json !== 'object' || json === null) return 'not a JSON object';
  const { epoch, votedFor, leaderId, version } = json as Record<string, unknown>;
  if (version !== VERSION) return `unknown version ${String(version)}`;
  if (!Number.isSafeInteger(epoch) || (epoch as number) < 0 || (epoch as number) > MAX_EPOCH) return `bad epoch ${String(epoch)}`;
  if (!isId(votedFor)) return `bad votedFor ${String(votedFor)}`;
  if (!isId(leaderId)) return `bad leaderId ${String(leaderId)}`;
  return { epoch: epoch as number, votedFor, leaderId };
}

export function encodeQuorumState(s: HardState): Buffer {
  return Buffer.from(JSON.stringify({ epoch: s.epoch, votedFor: s.votedFor, leaderId: s.leaderId, version: VERSION }) + '\n');
}

export class QuorumStateFile {
  /** The last save's outcome; the next save starts after it settles. */
  private tail: Promise<void> = Promise.resolve();

  private constructor(readonly dir: string) {}

  /** Reads the state in `dir` (FRESH_HARD_STATE when there is none); throws QuorumStorageError when it is damaged. */
  static open(dir: string): { file: QuorumStateFile; state: HardState } {
    rmSync(join(dir, QUORUM_STATE_FILE + TMP_SUFFIX), { force: true });
    let bytes: Buffer;
    try {
      bytes = readFileSync(join(dir, QUORUM_STATE_FILE));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      return { file: new QuorumStateFile(dir), state: FRESH_HARD_STATE };
    }
    const state = decodeQuorumState(bytes);
    if (typeof state === 'string') throw new QuorumStorageError('corrupt-quorum-state', `${join(dir, QUORUM_STATE_FILE)} is damaged: ${state}`);
    return { file: new QuorumStateFile(dir), state };
  }

  /** Resolves once `state` is durable; a failed save rejects and leaves the previous file in force. */
  save(state: HardState): Promise<void> {
    const bytes = encodeQuorumState(state);
    const next = this.tail.catch(() => undefined).then(() => replaceFileDurably(this.dir, QUORUM_STATE_FILE, TMP_SUFFIX, bytes));
    this.tail = next;
    return next;
  }
}
