// The Rust addon's loader and typed surface: finds native/sluice_native.node from the repo root (so
// it works from any compiled out dir), or inside the single executable its embedded copy (extracted
// to a verified cache file, embedded.ts), and loads it once per thread (module instances are per
// thread, and the addon registers context-aware, so each shard worker gets its own instance).
// Imports nothing of the broker: the wire vocabulary (CRC-32C), the log (io_uring commits) and the
// network layer (zero-copy sender) all load the addon through here.
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { embeddedNativePath, runsEmbedded } from './embedded.js';

declare const ringBrand: unique symbol;
/** An opaque ring handle (an N-API External). */
export type NativeRing = { readonly [ringBrand]: true };

export type Completion = (errno: string | null, message: string | null) => void;

/** The addon's exports; the sender* functions are the socket sender (src/net/native_sender.ts). */
export interface NativeAddon {
  openRing(entries: number, maxInflightBytes: number): NativeRing;
  /**
   * meta holds [fd, position, chunkCount] per op; false = nothing to do, no callback will run.
   * `written` (addons with reportsWritten) runs once every write landed, before `done`, and not
   * at all when a write failed.
   */
  commit(ring: NativeRing, meta: Float64Array, chunks: Buffer[], syncFds: Int32Array, done: Completion, written?: () => void, writeback?: Float64Array): boolean;
  /** commit() takes `written`. Absent from addons built before it. */
  readonly reportsWritten?: boolean;
  /**
   * commit() takes `writeback`, [fd, offset, length]* ranges whose dirty pages start going to disk
   * after the fd's writes and syncs (advisory: they never fail the commit). Absent from addons
   * built before it.
   */
  readonly startsWriteback?: boolean;
  close(ring: NativeRing): void;
  crc32c(buf: Uint8Array): number;
  readonly crc32cHardware: boolean;
  senderOpen(onReport: (id: number, bytes: number, items: number, status: string | null) => void, maxConns: number, maxConnBytes: number, maxConnItems: number, maxItems: number): null;
  senderAttach(fd: number): number;
  /** meta holds [fd, position, length]* with fd -1 naming the next Buffer of bufs. */
  senderEnqueue(id: number, meta: Float64Array, bufs: Buffer[]): void;
  /**
   * One non-blocking sendmsg of the chunks (meta as for senderEnqueue) on this thread, file ranges
   * read first from the page cache; the bytes written (0 while the sender thread still holds any
   * of the connection's items, when a range is not cached, or when the socket is full). Throws
   * the errno's name when the socket failed.
   */
  senderTrySend(id: number, meta: Float64Array, bufs: readonly Buffer[]): number;
  senderDetach(id: number): void;
  /**
   * Raises RLIMIT_NOFILE's soft limit to its hard one (getrlimit + setrlimit) and returns
   * [soft, hard] after the attempt (-1 for unlimited). Absent from addons built before it.
   */
  raiseNofile?(): [number, number];
  /**
   * A new close-on-exec descriptor for the open file `fd` names (fcntl F_DUPFD_CLOEXEC), the
   * caller's to close; throws with the errno's name as `code`. How main hands an accepted socket
   * to a shard worker. Absent from addons built before it.
   */
  dupFd?(fd: number): number;
}

export type IoMode = 'native' | 'node' | 'auto';
export const IO_MODES: readonly IoMode[] = ['native', 'node', 'auto'];

/** The package's root: the nearest directory above this module holding a package.json (from src/ or any compiled out dir). */
export function packageRoot(): string | null {
  for (let dir = dirname(fileURLToPath(import.meta.url)); ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    if (dirname(dir) === dir) return null;
  }
}

/** The addon or why it cannot be used; cached per thread (module instances are per thread). */
let addon: NativeAddon | string | undefined;

/** The addon, loaded once per thread, or why it cannot be loaded. */
export function loadAddon(): NativeAddon | string {
  if (addon !== undefined) return addon;
  addon = runsEmbedded() ? loadEmbeddedAddon() : loadBuiltAddon();
  return addon;
}

function loadBuiltAddon(): NativeAddon | string {
  const root = packageRoot();
  const path = root === null ? null : join(root, 'native', 'sluice_native.node');
  if (path === null) return 'native addon not found: no package.json above this module';
  if (!existsSync(path)) return `native addon not built (${path} missing; build with cargo on PATH)`;
  return requireAddon(path);
}

function loadEmbeddedAddon(): NativeAddon | string {
  let path: string | null;
  try {
    path = embeddedNativePath('sluice_native.node');
  } catch (err) {
    return `embedded native addon unusable: ${(err as Error).message}`;
  }
  return path === null ? 'native addon not embedded in this executable' : requireAddon(path);
}

function requireAddon(path: string): NativeAddon | string {
  try {
    return createRequire(import.meta.url)(path) as NativeAddon;
  } catch (err) {
    return `native addon failed to load: ${(err as Error).message}`;
  }
}

/** The addon's hardware CRC-32C (SSE4.2, table fallback inside), or null when the addon is unavailable. */
export function nativeCrc32cFunction(): ((buf: Uint8Array) => number) | null {
  const native = loadAddon();
  return typeof native === 'string' ? null : native.crc32c;
}
