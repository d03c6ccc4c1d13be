// Micro-benchmark of the storage seam: N partition files (1, 16, 256) each appending one batch
// of 1-64 KiB per commit, every commit fdatasync'ing all of them (the group commit under
// flush=always), one commit in flight, on the node and native backends and on a blocking
// reference ('sync': writevSync + fdatasyncSync on the calling thread, what a shard would do
// without an asynchronous backend). Reports commits/s, MB/s, p50/p99 commit latency and the
// calling thread's event-loop delay during the run (total and less its run-queue wait).
// Usage: node <outDir>/bench/micro/io_backend.js [dataDir]   (default: a fresh dir under /tmp)
// Each case is bounded by a time budget and a byte budget; its files are removed after it.
import { closeSync, fdatasyncSync, mkdtempSync, openSync, rmSync, writevSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { build } from 'hdr-histogram-js';
import { NodeIoBackend, type IoBackend, type WriteOp } from '../../src/log/io_backend.js';
import { loadNativeIo } from '../../src/log/native_io.js';
import { LoopDelayMonitor } from '../../src/common/loop_delay.js';

const PARTITIONS = [1, 16, 256];
const TIME_BUDGET_MS = 4_000;
const BYTE_BUDGET = 1 << 30;
const MIN_BATCH = 1024;
const MAX_BATCH = 64 * 1024;

/** The blocking reference: every write and fdatasync on the calling thread (no short writes on a regular file here). */
const syncIo: IoBackend = {
  name: 'sync',
  reportsWritten: true,
  commit(writes: readonly WriteOp[], syncFds: readonly number[], onWritten?: () => void): Promise<void> {
    for (const w of writes) writevSync(w.fd, w.chunks, w.position);
    onWritten?.();
    for (const fd of syncFds) fdatasyncSync(fd);
    return Promise.resolve();
  },
  startWriteback: () => undefined,
  close: () => Promise.resolve(),
};

/** A pool of batch buffers reused across commits (the bench measures I/O, not allocation). */
const pool = Array.from({ length: 64 }, (_, i) => Buffer.alloc(MIN_BATCH + Math.floor(((MAX_BATCH - MIN_BATCH) * i) / 63), i));

interface Result {
  backend: string;
  partitions: number;
  commits: number;
  commitsPerSec: number;
  mbPerSec: number;
  p50Ms: number;
  p99Ms: number;
  loopDelayP99Ms: number;
  loopDelayMaxMs: number;
  ownDelayP99Ms: number;
}

async function run(io: IoBackend, partitions: number, root: string): Promise<Result> {
  const dir = mkdtempSync(join(root, `${io.name}-${partitions}-`));
  const fds = Array.from({ length: partitions }, (_, i) => openSync(join(dir, `p${i}.log`), 'w+'));
  const positions = new Array<number>(partitions).fill(0);
  const latency = build({ lowestDiscernibleValue: 1, highestTrackableValue: 60_000_000, numberOfSignificantValueDigits: 3, autoResize: true });
  const loop = new LoopDelayMonitor(1);
  let bytes = 0;
  let commits = 0;
  let pick = 0;
  const start = performance.now();
  try {
    while (performance.now() - start < TIME_BUDGET_MS && bytes < BYTE_BUDGET) {
      const writes: WriteOp[] = [];
      for (let p = 0; p < partitions; p++) {
        const batch = pool[pick++ & 63]!;
        writes.push({ fd: fds[p]!, chunks: [batch], position: positions[p]! });
        positions[p]! += batch.length;
        bytes += batch.length;
      }
      const t0 = performance.now();
      await io.commit(writes, fds);
      // The blocking reference resolves at once: let the delay sampler's timer run between commits.
      if (io === syncIo) await new Promise<void>((resolve) => setImmediate(resolve));
      latency.recordValue(Math.max(1, Math.round((performance.now() - t0) * 1000)));
      commits++;
    }
  } finally {
    for (const fd of fds) closeSync(fd);
    rmSync(dir, { recursive: true, force: true });
  }
  const seconds = (performance.now() - start) / 1000;
  const delay = loop.take();
  loop.close();
  return {
    backend: io.name,
    partitions,
    commits,
    commitsPerSec: commits / seconds,
    mbPerSec: bytes / seconds / 1e6,
    p50Ms: latency.getValueAtPercentile(50) / 1000,
    p99Ms: latency.getValueAtPercentile(99) / 1000,
    loopDelayP99Ms: delay?.p99Ms ?? NaN,
    loopDelayMaxMs: delay?.maxMs ?? NaN,
    ownDelayP99Ms: delay?.ownP99Ms ?? NaN,
  };
}

const root = process.argv[2] ?? mkdtempSync(join(tmpdir(), 'sluice-io-bench-'));
const native = loadNativeIo();
if ('unavailable' in native) console.log(`native backend unavailable (${native.unavailable}); node only`);
const backends: IoBackend[] = [syncIo, new NodeIoBackend(), ...('backend' in native ? [native.backend] : [])];
const results: Result[] = [];
try {
  for (const partitions of PARTITIONS) for (const io of backends) results.push(await run(io, partitions, root));
} finally {
  if ('backend' in native) await native.backend.close();
  if (process.argv[2] === undefined) rmSync(root, { recursive: true, force: true });
}
console.log(`UV_THREADPOOL_SIZE=${process.env['UV_THREADPOOL_SIZE'] ?? '4 (default)'}`);
console.table(
  results.map((r) => ({
    backend: r.backend,
    partitions: r.partitions,
    commits: r.commits,
    'commits/s': r.commitsPerSec.toFixed(0),
    'MB/s': r.mbPerSec.toFixed(1),
    'p50 ms': r.p50Ms.toFixed(2),
    'p99 ms': r.p99Ms.toFixed(2),
    'loop p99 ms': r.loopDelayP99Ms.toFixed(2),
    'loop max ms': r.loopDelayMaxMs.toFixed(2),
    'loop own p99 ms': r.ownDelayP99Ms.toFixed(2),
  })),
);
for (const partitions of PARTITIONS) {
  const rate = (name: string): number => results.find((r) => r.backend === name && r.partitions === partitions)?.commitsPerSec ?? NaN;
  console.log(`${partitions} partition(s): native/node ${(rate('native') / rate('node')).toFixed(2)}x, native/sync ${(rate('native') / rate('sync')).toFixed(2)}x, node/sync ${(rate('node') / rate('sync')).toFixed(2)}x commits/s`);
}
