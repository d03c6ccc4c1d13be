// The native (io_uring) IoBackend and the choice between it and NodeIoBackend. Loads the Rust
// addon native/sluice_native.node (found from the repo root, so it works from any compiled out
// dir), opens one ring per backend; completions arrive on the calling thread's event loop through
// the addon's threadsafe function, so nothing polls. Runs on whichever thread creates the backend
// (each shard worker loads its own addon instance and ring).
// Invariants: every Buffer of a commit stays referenced here until its completion callback ran
// (the addon keeps only raw pointers); 'native' mode never falls back silently.
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { NodeIoBackend, StorageError, type IoBackend, type WriteOp } from './io_backend.js';

declare const ringBrand: unique symbol;
/** An opaque ring handle (an N-API External). */
type NativeRing = { readonly [ringBrand]: true };

type Completion = (errno: string | null, message: string | null) => void;

/** The addon's exports; the sender* functions are the socket sender (src/net/native_sender.ts). */
export interface NativeAddon {
  openRing(entries: number, maxInflightBytes: number): NativeRing;
  /** meta holds [fd, position, chunkCount] per op; false = nothing to do, the callback will not run. */
  commit(ring: NativeRing, meta: Float64Array, chunks: Buffer[], syncFds: Int32Array, done: Completion): boolean;
  close(ring: NativeRing): void;
  crc32c(buf: Uint8Array): number;
  readonly crc32cHardware: boolean;
  senderOpen(onReport: (id: number, bytes: number, items: number, status: string | null) => void, maxConns: number, maxConnBytes: number, maxConnItems: number, maxItems: number): null;
  senderAttach(fd: number): number;
  /** meta holds [fd, position, length]* with fd -1 naming the next Buffer of bufs. */
  senderEnqueue(id: number, meta: Float64Array, bufs: Buffer[]): void;
  senderDetach(id: number): void;
}

export type IoMode = 'native' | 'node' | 'auto';
export const IO_MODES: readonly IoMode[] = ['native', 'node', 'auto'];

/** SQ entries per ring: bounds the operations (writes + syncs) in flight at once. */
const RING_ENTRIES = 4096;
/** Bytes in flight per ring; a shard's staged data is bounded far below this by its ring size. */
const MAX_INFLIGHT_BYTES = 1 << 30;

function repoRoot(): string | null {
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
  const root = repoRoot();
  const path = root === null ? null : join(root, 'native', 'sluice_native.node');
  if (path === null) addon = 'native addon not found: no package.json above this module';
  else if (!existsSync(path)) addon = `native addon not built (${path} missing; build with cargo on PATH)`;
  else {
    try {
      addon = createRequire(import.meta.url)(path) as NativeAddon;
    } catch (err) {
      addon = `native addon failed to load: ${(err as Error).message}`;
    }
  }
  return addon;
}

function uringDisabledNote(): string {
  try {
    const v = readFileSync('/proc/sys/kernel/io_uring_disabled', 'utf8').trim();
    return v === '0' ? '' : ` (kernel.io_uring_disabled=${v})`;
  } catch {
    return '';
  }
}

export class NativeIoBackend implements IoBackend {
  readonly name = 'native';
  private inFlight = 0;
  private idle: Array<() => void> = [];
  private closed = false;

  constructor(
    private readonly native: NativeAddon,
    private readonly ring: NativeRing,
  ) {}

  commit(writes: readonly WriteOp[], syncFds: readonly number[]): Promise<void> {
    if (this.closed) return Promise.reject(new StorageError('native I/O backend is closed'));
    const meta = new Float64Array(writes.length * 3);
    const chunks: Buffer[] = [];
    for (let i = 0; i < writes.length; i++) {
      const w = writes[i]!;
      meta[3 * i] = w.fd;
      meta[3 * i + 1] = w.position;
      meta[3 * i + 2] = w.chunks.length;
      for (const c of w.chunks) chunks.push(c);
    }
    return new Promise<void>((resolve, reject) => {
      const done: Completion = (errno, message) => {
        chunks.length = 0; // the kernel is done with them; until now this closure kept them alive
        this.settled();
        if (errno === null) resolve();
        else reject(new StorageError(`native ${message ?? errno}`, errno));
      };
      try {
        if (!this.native.commit(this.ring, meta, chunks, Int32Array.from(syncFds), done)) return resolve();
      } catch (err) {
        return reject(StorageError.from(err, 'native commit'));
      }
      this.inFlight++;
    });
  }

  /** Waits for in-flight commits, then tears the ring and its completion thread down. */
  async close(): Promise<void> {
    this.closed = true;
    while (this.inFlight > 0) await new Promise<void>((resolve) => this.idle.push(resolve));
    this.native.close(this.ring);
  }

  private settled(): void {
    if (--this.inFlight > 0) return;
    for (const resolve of this.idle.splice(0)) resolve();
  }
}

/** A native backend with its own ring, or why there cannot be one on this machine/build. */
export function loadNativeIo(): { backend: NativeIoBackend } | { unavailable: string } {
  const native = loadAddon();
  if (typeof native === 'string') return { unavailable: native };
  try {
    return { backend: new NativeIoBackend(native, native.openRing(RING_ENTRIES, MAX_INFLIGHT_BYTES)) };
  } catch (err) {
    return { unavailable: `${(err as Error).message}${uringDisabledNote()}` };
  }
}

/** The addon's hardware CRC-32C (SSE4.2, table fallback inside), or null when the addon is unavailable. */
export function nativeCrc32cFunction(): ((buf: Uint8Array) => number) | null {
  const native = loadAddon();
  return typeof native === 'string' ? null : native.crc32c;
}

/** The backend for `mode`; 'native' throws when it is unavailable, 'auto' falls back to node and says why in `note`. */
export function selectIoBackend(mode: IoMode): { backend: IoBackend; note: string } {
  if (mode === 'node') return { backend: new NodeIoBackend(), note: 'io=node' };
  const loaded = loadNativeIo();
  if ('backend' in loaded) return { backend: loaded.backend, note: '' };
  if (mode === 'native') throw new Error(`io=native but the native I/O backend is unavailable: ${loaded.unavailable}`);
  return { backend: new NodeIoBackend(), note: loaded.unavailable };
}
