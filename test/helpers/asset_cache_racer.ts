// Test helper (a worker thread of test/unit/native/asset_cache.test.ts): one contender in a race
// on the asset cache. An 'extract' racer calls cachedFilePath once per round when the main thread
// opens the round and checks the bytes at the path it got; a 'watch' racer reads the final path
// over and over until told to stop and counts every read that is neither absent nor one of the
// two whole contents the main thread allows (a half-written file would be such a read).
import { readFileSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import { cachedFilePath, sha256Hex } from '../../src/native/asset_cache.js';

export interface RacerData {
  readonly role: 'extract' | 'watch';
  readonly name: string;
  readonly bytes: Uint8Array;
  readonly sha256: string;
  /** Whole contents a watcher may see besides the real one (the corruptions the main thread writes). */
  readonly alsoValid: readonly Uint8Array[];
  readonly candidates: readonly string[];
  readonly uid: number;
  readonly rounds: number;
  /** [0] the open round (main increments it), [1] extractors done in total, [2] 1 = stop watching. */
  readonly control: SharedArrayBuffer;
}

export interface RacerReport {
  readonly wrong: string[];
  readonly reads: number;
}

const data = workerData as RacerData;
const control = new Int32Array(data.control);
const wrong: string[] = [];
let reads = 0;

if (data.role === 'extract') {
  for (let round = 1; round <= data.rounds; round++) {
    Atomics.wait(control, 0, round - 1);
    try {
      const path = cachedFilePath({ name: data.name, bytes: data.bytes, sha256: data.sha256 }, data.candidates, data.uid);
      if (sha256Hex(readFileSync(path)) !== data.sha256) wrong.push(`round ${round}: ${path} holds other bytes`);
    } catch (err) {
      wrong.push(`round ${round}: ${(err as Error).message}`);
    }
    Atomics.add(control, 1, 1);
    Atomics.notify(control, 1);
  }
} else {
  const path = `${data.candidates[0] ?? ''}/${data.name}`;
  const valid = new Set([data.sha256, ...data.alsoValid.map(sha256Hex)]);
  while (Atomics.load(control, 2) === 0) {
    let seen: Buffer;
    try {
      seen = readFileSync(path);
    } catch {
      continue;
    }
    reads++;
    if (!valid.has(sha256Hex(seen))) wrong.push(`read ${seen.length} of ${data.bytes.length} bytes that are no whole content`);
  }
}

parentPort?.postMessage({ wrong: wrong.slice(0, 10), reads } satisfies RacerReport);
