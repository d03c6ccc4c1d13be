// Micro-benchmark: one metadata-quorum append (a single ~100-byte data entry, written and
// fdatasync'd through QuorumStorage's log), then one quorum-state save (write, fsync, rename,
// directory fsync), each awaited one at a time, on the disk holding the directory given (default:
// the OS temp dir). Reports the median, p90 and p99 in microseconds over N operations.
// Usage: node <outDir>/bench/micro/quorum_append.js [count=1000] [dir] [io=node|native]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Entry } from '../../src/coordinator/raft/types.js';
import { selectIoBackend } from '../../src/log/native_io.js';
import { openQuorumStorage } from '../../src/actors/quorum/quorum_storage.js';

function percentiles(samples: number[]): { p50: number; p90: number; p99: number } {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number): number => Math.round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]! * 1000);
  return { p50: at(0.5), p90: at(0.9), p99: at(0.99) };
}

async function main(): Promise<void> {
  const count = Number(process.argv[2] ?? 1000);
  const dir = mkdtempSync(join(process.argv[3] ?? tmpdir(), 'sluice-quorum-bench-'));
  const io = selectIoBackend(process.argv[4] === 'native' ? 'native' : 'node').backend;
  const { storage } = openQuorumStorage(dir, { bootstrapVoters: [1], io });
  try {
    const appends: number[] = [];
    const states: number[] = [];
    const data = new Uint8Array(100).fill(7);
    for (let i = 0; i < count; i++) {
      const entry: Entry = { offset: i, epoch: 1, kind: 'data', data };
      let t = performance.now();
      await storage.append([entry]);
      appends.push(performance.now() - t);
      t = performance.now();
      await storage.saveHardState({ epoch: i + 1, votedFor: 1, leaderId: 1 });
      states.push(performance.now() - t);
    }
    console.table({ 'append + fdatasync (µs)': percentiles(appends), 'quorum-state save (µs)': percentiles(states) });
    console.log(`${count} each, io=${io.name}, dir=${dir}`);
  } finally {
    await storage.close();
    await io.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

void main();
