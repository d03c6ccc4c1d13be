// The parallel consumer's pure bookkeeping per message: window check, watermark tracker,
// key router (1k keys over 12 partitions, key ordering), a simulated pool of WORKERS finishing
// in pseudo-random order, and a commit (metadata encode) every COMMIT_EVERY completions.
// Prints messages/s (each message = mayStart + started + submit + next + done + completed).
// Also the tracker alone and the router alone, to see which one costs what.
// Run: node <outDir>/bench/micro/parallel.js   (bounded: fixed counts, RUNS runs, a few seconds)
import { KeyRouter } from '../../src/client/parallel/key_router.js';
import type { RoutedMessage } from '../../src/client/parallel/key_router.js';
import { encodeOffsetMetadata } from '../../src/client/parallel/offset_codec.js';
import { WatermarkTracker } from '../../src/client/parallel/watermark.js';
import { mayStart } from '../../src/client/parallel/window.js';

const MESSAGES = 1_000_000;
const KEYS = 1000;
const PARTITIONS = 12;
const WORKERS = 64;
const MAX_QUEUED = 10_000;
const COMMIT_EVERY = 10_000;
const BUDGET = 4096;
const RUNS = 5;

function makeMessages(): RoutedMessage[] {
  const keys = Array.from({ length: KEYS }, (_, k) => Buffer.from(`key-${k}`));
  const nextOffset = new Array<number>(PARTITIONS).fill(0);
  let seed = 42;
  return Array.from({ length: MESSAGES }, () => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    const k = seed % KEYS;
    const partition = k % PARTITIONS; // a key lives in one partition, as Kafka's partitioner does
    return { partition, offset: nextOffset[partition]++, key: keys[k] as Buffer };
  });
}

/** The whole pipeline; returns seconds. */
function pipeline(messages: readonly RoutedMessage[]): number {
  const trackers = Array.from({ length: PARTITIONS }, () => new WatermarkTracker(0));
  const router = new KeyRouter<RoutedMessage>({ maxQueued: MAX_QUEUED });
  const running: RoutedMessage[] = [];
  let fetched = 0;
  let finished = 0;
  let seed = 7;
  let metadataChars = 0;
  const started = process.hrtime.bigint();
  while (finished < messages.length) {
    while (fetched < messages.length && !router.full) {
      const m = messages[fetched] as RoutedMessage;
      const tracker = trackers[m.partition] as WatermarkTracker;
      if (!mayStart(tracker, m.offset, BUDGET)) break;
      if (tracker.started(m.offset)) router.submit(m);
      fetched++;
    }
    while (running.length < WORKERS) {
      const m = router.next();
      if (m === null) break;
      running.push(m);
    }
    // Finish a pseudo-random quarter of the pool, out of order.
    for (let i = running.length >>> 2 || 1; i > 0 && running.length > 0; i--) {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      const at = seed % running.length;
      const m = running[at] as RoutedMessage;
      running[at] = running[running.length - 1] as RoutedMessage;
      running.pop();
      router.done(m);
      (trackers[m.partition] as WatermarkTracker).completed(m.offset);
      if (++finished % COMMIT_EVERY === 0) {
        for (const t of trackers) metadataChars = Math.max(metadataChars, (encodeOffsetMetadata(t.committable(), t.completionRuns(), BUDGET) ?? '').length);
      }
    }
  }
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  if (metadataChars > BUDGET) throw new Error('metadata over budget');
  return seconds;
}

function trackerOnly(): number {
  const tracker = new WatermarkTracker(0);
  const started = process.hrtime.bigint();
  for (let o = 0; o < MESSAGES; o++) {
    tracker.started(o);
    // Complete with a lag of 64 and pairwise swapped, so completions land above the watermark.
    if (o >= 64) tracker.completed((o - 64) ^ 1);
  }
  return Number(process.hrtime.bigint() - started) / 1e9;
}

function routerOnly(messages: readonly RoutedMessage[]): number {
  const router = new KeyRouter<RoutedMessage>({ maxQueued: MAX_QUEUED });
  const started = process.hrtime.bigint();
  let fetched = 0;
  let finished = 0;
  while (finished < messages.length) {
    while (fetched < messages.length && !router.full) router.submit(messages[fetched++] as RoutedMessage);
    for (let m = router.next(); m !== null; m = router.next()) {
      router.done(m);
      finished++;
    }
  }
  return Number(process.hrtime.bigint() - started) / 1e9;
}

function report(name: string, samples: number[]): void {
  samples.sort((a, b) => a - b);
  const median = samples[Math.floor(samples.length / 2)] as number;
  console.log(`${name.padEnd(38)} ${(MESSAGES / median / 1e6).toFixed(2)} M msgs/s (best ${(MESSAGES / (samples[0] as number) / 1e6).toFixed(2)})`);
}

const messages = makeMessages();
console.log(`parallel consumer bookkeeping (node ${process.version}; ${MESSAGES / 1e6}M msgs, ${KEYS} keys, ${PARTITIONS} partitions, ${RUNS} runs, median)`);
pipeline(messages); // warm-up
report(`pipeline (${WORKERS} workers, out of order)`, Array.from({ length: RUNS }, () => pipeline(messages)));
report('tracker alone (started + completed)', Array.from({ length: RUNS }, trackerOnly));
report('router alone (submit + next + done)', Array.from({ length: RUNS }, () => routerOnly(messages)));
