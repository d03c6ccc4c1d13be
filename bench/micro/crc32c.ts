// Micro-benchmark: CRC-32C of the native addon (SSE4.2 when the CPU has it) against
// @node-rs/crc32 on 1 KiB, 16 KiB and 1 MiB buffers, single thread. Each case runs for a fixed
// time budget (bounded in count too); results are ns per call and GB/s.
// Usage: node <outDir>/bench/micro/crc32c.js
import { randomBytes } from 'node:crypto';
import { crc32c } from '@node-rs/crc32';
import { nativeCrc32cFunction } from '../../src/native/addon.js';

const SIZES = [1024, 16 * 1024, 1024 * 1024];
const BUDGET_NS = 400_000_000n;
const MAX_CALLS = 5_000_000;

function measure(fn: (b: Buffer) => number, buf: Buffer): { nsPerCall: number; gbPerSec: number } {
  for (let i = 0; i < 200; i++) fn(buf); // warm-up
  let calls = 0;
  let sink = 0;
  const start = process.hrtime.bigint();
  let elapsed = 0n;
  while (elapsed < BUDGET_NS && calls < MAX_CALLS) {
    for (let i = 0; i < 64; i++) sink ^= fn(buf);
    calls += 64;
    elapsed = process.hrtime.bigint() - start;
  }
  if (sink === 0.5) console.log(sink); // keeps the calls observable
  const nsPerCall = Number(elapsed) / calls;
  return { nsPerCall, gbPerSec: buf.length / nsPerCall };
}

const nativeCrc32c = nativeCrc32cFunction();
const rows: Array<Record<string, string>> = [];
for (const size of SIZES) {
  const buf = randomBytes(size);
  const candidates: Array<[string, (b: Buffer) => number]> = [['@node-rs/crc32', (b) => crc32c(b)]];
  if (nativeCrc32c !== null) candidates.push(['native', (b) => nativeCrc32c(b)]);
  for (const [name, fn] of candidates) {
    const r = measure(fn, buf);
    rows.push({ impl: name, size: `${size / 1024} KiB`, 'ns/call': r.nsPerCall.toFixed(0), 'GB/s': r.gbPerSec.toFixed(2) });
  }
}
if (nativeCrc32c === null) console.log('native addon unavailable: only @node-rs/crc32 measured');
console.table(rows);
