// The parallel consumer over an in-memory consumer (fake_consumer.ts): per-key order under random
// handler delays, at-least-once without redoing committed work across crashes, backpressure
// hysteresis and its byte bound, retries and the dead-letter topic, revoke hand-over (drain and
// abandon at the deadline), the metadata budget throttling the window, and piscina workers.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import type { ConsumerMessage } from '../../../../src/client/consumer/types.js';
import { decodeOffsetMetadata, encodeOffsetMetadata } from '../../../../src/client/parallel/offset_codec.js';
import { ParallelConsumer } from '../../../../src/client/parallel/parallel_consumer.js';
import type { ParallelConsumerOptions } from '../../../../src/client/parallel/parallel_consumer.js';
import type { ConsumerPort, MessageHandler } from '../../../../src/client/parallel/ports.js';
import { DeadLetterHeaders } from '../../../../src/client/parallel/retry.js';
import { FakeConsumer, FakeGroup, MESSAGE_BYTES } from './fake_consumer.js';
import { mulberry32 } from '../../../helpers/seeded_random.js';

const delay = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function waitFor(what: string, cond: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await delay(1);
  }
}

interface Harness {
  readonly pc: ParallelConsumer;
  readonly fake: () => FakeConsumer;
}

function harness(group: FakeGroup, options: Omit<ParallelConsumerOptions, 'consumer'>, maxPerPoll = 10): Harness {
  let fake: FakeConsumer | null = null;
  const pc = new ParallelConsumer({
    commitIntervalMs: 5,
    shutdownDeadlineMs: 2_000,
    ...options,
    consumer: (listener): ConsumerPort => {
      fake = new FakeConsumer(group, listener, maxPerPoll);
      return fake;
    },
  });
  return { pc, fake: () => fake as FakeConsumer };
}

const id = (m: ConsumerMessage): string => `${m.partition}:${m.offset}`;

/** Whether every offset of every partition was committed as consumed. */
const allCommitted = (group: FakeGroup): boolean =>
  group.logs.every((log, p) => group.committed.get(p)?.offset === log.length);

/** Asserts every offset of every partition was committed as consumed. */
function assertAllCommitted(group: FakeGroup): void {
  group.logs.forEach((log, p) => assert.equal(group.committed.get(p)?.offset, log.length, `partition ${p} final commit`));
}

describe('ParallelConsumer', () => {
  it('never runs two messages of a key at once nor out of order, under random delays', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer(),
        fc.integer({ min: 1, max: 3 }),
        fc.integer({ min: 10, max: 60 }),
        fc.integer({ min: 1, max: 8 }),
        fc.integer({ min: 1, max: 16 }),
        fc.constantFrom('key' as const, 'partition' as const),
        async (seed, partitions, perPartition, keys, concurrency, ordering) => {
          const random = mulberry32(seed);
          const group = FakeGroup.withKeys(partitions, perPartition, keys);
          const lanes = new Map<string, { running: boolean; last: number }>();
          const violations: string[] = [];
          let done = 0;
          let maxRunning = 0;
          let running = 0;
          const handler: MessageHandler = async (m) => {
            const lane = ordering === 'key' ? `${m.partition}/${String(m.key)}` : `${m.partition}`;
            const state = lanes.get(lane) ?? { running: false, last: -1 };
            lanes.set(lane, state);
            if (state.running || m.offset <= state.last) violations.push(`${lane}@${m.offset} after ${state.last}`);
            state.running = true;
            state.last = m.offset;
            maxRunning = Math.max(maxRunning, ++running);
            const r = random();
            if (r < 0.3) await delay(Math.floor(r * 10));
            else await new Promise((resolve) => setImmediate(resolve));
            running--;
            state.running = false;
            done++;
          };
          const h = harness(group, { handler, ordering, concurrency });
          await h.pc.start(['t']);
          await waitFor('all processed', () => done === group.total);
          await h.pc.stop();
          assert.deepEqual(violations, []);
          assert.ok(maxRunning <= concurrency);
          assertAllCommitted(group);
        },
      ),
      { numRuns: 15 },
    );
  });

  it('processes everything at least once and nothing a commit recorded, across crashes', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer(),
        fc.array(fc.integer({ min: 1, max: 120 }), { minLength: 1, maxLength: 3 }),
        fc.integer({ min: 2, max: 12 }),
        async (seed, crashPoints, concurrency) => {
          const random = mulberry32(seed);
          const group = FakeGroup.withKeys(3, 80, 6);
          const processed = new Set<string>();
          const violations: string[] = [];
          // What successful commits recorded as done: below an offset, or marked in the metadata.
          const below = new Map<number, number>();
          const marked = new Set<string>();
          let seen = 0;
          const recordedDone = (m: ConsumerMessage): boolean => {
            for (; seen < group.commitHistory.length; seen++) {
              const c = group.commitHistory[seen] as { partition: number; offset: number; metadata: string };
              below.set(c.partition, Math.max(below.get(c.partition) ?? 0, c.offset));
              const decoded = decodeOffsetMetadata(c.metadata, c.offset);
              assert.ok(decoded !== null, 'our metadata decodes');
              for (let o = decoded.base; o < decoded.end; o++) if (decoded.has(o)) marked.add(`${c.partition}:${o}`);
            }
            return m.offset < (below.get(m.partition) ?? 0) || marked.has(id(m));
          };
          for (let generation = 0; generation <= crashPoints.length; generation++) {
            const crashAt = crashPoints[generation] ?? Infinity;
            let alive = true;
            let completions = 0;
            let h: Harness | null = null;
            const handler: MessageHandler = async (m, signal) => {
              if (recordedDone(m)) violations.push(`${id(m)} reprocessed`);
              await delay(Math.floor(random() * 3));
              if (!alive) {
                // A crashed process's handler never finishes; it is abandoned at the deadline.
                await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
                return;
              }
              processed.add(id(m));
              if (++completions === crashAt) {
                alive = false;
                h?.fake().kill();
              }
            };
            h = harness(group, { handler, concurrency, shutdownDeadlineMs: 20 });
            await h.pc.start(['t']);
            // Earlier generations may already have processed everything without committing it all,
            // so the last one runs until its commits cover every offset.
            if (crashAt === Infinity) await waitFor('all committed', () => processed.size === group.total && allCommitted(group));
            else await waitFor('crash', () => !alive || processed.size === group.total);
            await h.pc.stop();
          }
          assert.deepEqual(violations, []);
          assert.equal(processed.size, group.total);
          assertAllCommitted(group);
        },
      ),
      { numRuns: 12 },
    );
  });

  it('skips, after a restart, offsets the committed metadata marks complete', async () => {
    const group = FakeGroup.withKeys(1, 10, 10);
    // Offset 2 pending; 3..6 done.
    group.committed.set(0, { offset: 2, metadata: encodeOffsetMetadata(2, [1, 4], 4000) as string });
    const seen: number[] = [];
    const h = harness(group, { handler: async (m) => void seen.push(m.offset), ordering: 'unordered' });
    await h.pc.start(['t']);
    await waitFor('rest processed', () => seen.length === 4);
    await delay(20);
    await h.pc.stop();
    assert.deepEqual(seen.sort((a, b) => a - b), [2, 7, 8, 9]);
    assert.equal(h.pc.stats().skipped, 4);
    assertAllCommitted(group);
  });

  it('pauses over the high watermark, fetches again only below the low one, within one fetch of the bound', async () => {
    const group = FakeGroup.withKeys(4, 150, 50);
    const high = 20 * MESSAGE_BYTES;
    const low = 10 * MESSAGE_BYTES;
    let over = false;
    const violations: string[] = [];
    let h: Harness | null = null;
    const observe = (what: string): void => {
      const q = (h as Harness).pc.stats().queuedBytes;
      if (q >= high) over = true;
      else if (q <= low) over = false;
      if (what === 'poll' && over) violations.push(`poll at ${q} queued bytes while over`);
    };
    let done = 0;
    let sawPaused = false;
    const handler: MessageHandler = async () => {
      observe('start');
      sawPaused ||= (h as Harness).pc.stats().paused.length > 0;
      await delay(1);
      done++;
    };
    h = harness(group, { handler, concurrency: 4, maxQueuedBytes: high, resumeRatio: 0.5, fetchMinBytes: MESSAGE_BYTES }, 50);
    await h.pc.start(['t']);
    const fake = h.fake();
    const poll = fake.poll.bind(fake);
    fake.poll = (options) => {
      observe('poll');
      return poll(options);
    };
    await waitFor('all processed', () => done === group.total, 20_000);
    const stats = h.pc.stats();
    await h.pc.stop();
    assert.deepEqual(violations, []);
    assert.ok(fake.pauseCalls > 0 && fake.resumeCalls > 0, `pause ${fake.pauseCalls} resume ${fake.resumeCalls}`);
    assert.ok(sawPaused, 'stats never showed a paused partition');
    assert.ok(stats.maxQueuedBytes >= high, 'the bound was never reached: the test proves nothing');
    assert.ok(stats.maxQueuedBytes <= high + fake.maxPollBytes, `max queued ${stats.maxQueuedBytes} > ${high} + ${fake.maxPollBytes}`);
    assertAllCommitted(group);
  });

  it('retries a failing message, then sends a poison one to the dead-letter topic', async () => {
    const group = FakeGroup.withKeys(1, 20, 4);
    const attempts = new Map<number, number>();
    const sent: { topic: string; headers: { key: string; value: Buffer | null }[] }[] = [];
    let sinkFailures = 1;
    const sink = {
      send: async (topic: string, record: { headers: { key: string; value: Buffer | null }[] }): Promise<void> => {
        if (sinkFailures-- > 0) throw new Error('dead-letter topic unavailable');
        sent.push({ topic, headers: record.headers });
      },
    };
    const handler: MessageHandler = async (m) => {
      const n = (attempts.get(m.offset) ?? 0) + 1;
      attempts.set(m.offset, n);
      if (m.offset === 7) throw new Error('poison');
      if (m.offset === 3 && n === 1) throw new Error('transient');
    };
    const h = harness(group, { handler, retries: { max: 2, backoffMs: 1 }, deadLetter: { topic: 'dlt', sink } });
    await h.pc.start(['t']);
    await waitFor('all done', () => h.pc.stats().processed + h.pc.stats().deadLettered === 20);
    const stats = h.pc.stats();
    await h.pc.stop();
    assert.equal(attempts.get(7), 3);
    assert.equal(attempts.get(3), 2);
    assert.equal(stats.deadLettered, 1);
    assert.equal(stats.retries, 3);
    assert.equal(sent.length, 1);
    const header = (key: string): string | undefined => sent[0]?.headers.find((x) => x.key === key)?.value?.toString();
    assert.equal(sent[0]?.topic, 'dlt');
    assert.equal(header(DeadLetterHeaders.offset), '7');
    assert.equal(header(DeadLetterHeaders.attempts), '3');
    assert.match(header(DeadLetterHeaders.error) ?? '', /poison/);
    assertAllCommitted(group);
  });

  it('hands a revoked partition over: drains it, commits its final watermark, starts nothing more of it', async () => {
    const group = FakeGroup.withKeys(2, 60, 5);
    const runningOf = [0, 0];
    const done: Set<number>[] = [new Set(), new Set()];
    let revoked = false;
    const late: string[] = [];
    const handler: MessageHandler = async (m) => {
      if (revoked && m.partition === 0) late.push(id(m));
      runningOf[m.partition]!++;
      await delay(1 + (m.offset % 3));
      runningOf[m.partition]!--;
      done[m.partition]!.add(m.offset);
    };
    const h = harness(group, { handler, concurrency: 8, commitIntervalMs: 60_000 });
    await h.pc.start(['t']);
    await waitFor('some progress', () => done[0]!.size >= 10);
    await h.fake().revoke([0]);
    revoked = true;
    assert.equal(runningOf[0], 0, 'a handler of the revoked partition still runs');
    const c = group.committed.get(0);
    assert.ok(c !== undefined, 'no commit on revoke');
    const marked = decodeOffsetMetadata(c.metadata, c.offset);
    assert.ok(marked !== null);
    for (let o = 0; o < c.offset; o++) assert.ok(done[0]!.has(o), `committed past unprocessed ${o}`);
    for (const o of done[0]!) assert.ok(o < c.offset || marked.has(o), `completed ${o} missing from the final commit`);
    for (let o = c.offset; o < marked.end; o++) if (marked.has(o)) assert.ok(done[0]!.has(o));
    await waitFor('partition 1 done', () => done[1]!.size === 60);
    await h.pc.stop();
    assert.deepEqual(late, []);
    assert.equal(group.committed.get(1)?.offset, 60);
  });

  it('abandons a stuck handler at the revoke deadline and leaves its offset uncommitted', async () => {
    const group = FakeGroup.withKeys(1, 10, 10);
    let aborted = false;
    const handler: MessageHandler = async (m, signal) => {
      if (m.offset !== 4) return;
      await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
      aborted = signal.aborted;
    };
    const h = harness(group, { handler, ordering: 'unordered', shutdownDeadlineMs: 30 });
    await h.pc.start(['t']);
    await waitFor('others done', () => h.pc.stats().processed === 9);
    const started = Date.now();
    await h.fake().revoke([0]);
    assert.ok(Date.now() - started >= 25, 'revoke returned before the deadline');
    await waitFor('abandoned', () => h.pc.stats().abandoned === 1);
    assert.ok(aborted);
    const c = group.committed.get(0);
    assert.equal(c?.offset, 4);
    const marked = decodeOffsetMetadata(c?.metadata ?? null, 4);
    assert.deepEqual([5, 6, 7, 8, 9].map((o) => marked?.has(o)), [true, true, true, true, true]);
    await h.pc.stop();
  });

  it('commits nothing for a lost partition', async () => {
    const group = FakeGroup.withKeys(1, 30, 3);
    let gate: (() => void) | null = null;
    const handler: MessageHandler = async (m) => {
      if (m.offset === 5) await new Promise<void>((resolve) => (gate = resolve));
    };
    const h = harness(group, { handler, commitIntervalMs: 60_000 });
    await h.pc.start(['t']);
    await waitFor('stuck', () => gate !== null);
    await h.fake().lose([0]);
    (gate as unknown as () => void)();
    await h.pc.stop();
    assert.equal(group.committed.get(0), undefined);
    assert.equal(h.pc.stats().queuedMessages, 0);
  });

  it('shrinks the window to the metadata budget around a stuck message without stalling', async () => {
    const budget = 16;
    const group = FakeGroup.withKeys(1, 200, 200);
    let release: (() => void) | null = null;
    const handler: MessageHandler = async (m) => {
      if (m.offset === 0) await new Promise<void>((resolve) => (release = resolve));
    };
    const h = harness(group, { handler, ordering: 'unordered', concurrency: 32, metadataMaxChars: budget });
    await h.pc.start(['t']);
    await waitFor('stuck', () => release !== null);
    await delay(50);
    const during = h.pc.stats().processed;
    assert.ok(during > 0, 'the stuck message stalled everything');
    assert.ok(during < 20, `${during} processed past a window the budget cannot describe`);
    (release as unknown as () => void)();
    await waitFor('all processed', () => h.pc.stats().processed === 200);
    await h.pc.stop();
    assert.ok(group.commitHistory.length > 0);
    for (const c of group.commitHistory) assert.ok(c.metadata.length <= budget, `metadata ${c.metadata.length} chars over ${budget}`);
    assert.ok(group.commitHistory.some((c) => c.metadata !== ''), 'no commit carried metadata: the test proves nothing');
    assertAllCommitted(group);
  });

  it('reports hot keys and runs a designated hot key out of order', async () => {
    const group = FakeGroup.withKeys(1, 40, 1); // one key: everything is hot
    let running = 0;
    let maxRunning = 0;
    let peakDepth = 0;
    let h: Harness | null = null;
    const handler: MessageHandler = async () => {
      maxRunning = Math.max(maxRunning, ++running);
      peakDepth = Math.max(peakDepth, (h as Harness).pc.stats(1).hotKeys[0]?.depth ?? 0);
      await delay(1);
      running--;
    };
    const ordered = harness(group, { handler, concurrency: 8 });
    h = ordered;
    await ordered.pc.start(['t']);
    await waitFor('done', () => ordered.pc.stats().processed === 40);
    await ordered.pc.stop();
    assert.equal(maxRunning, 1);
    assert.ok(peakDepth > 1, 'the hot key lane never showed a backlog');
    maxRunning = 0;
    const split = FakeGroup.withKeys(1, 40, 1);
    const splitting = harness(split, { handler, concurrency: 8, unorderedKeys: ['k0'] });
    h = splitting;
    await splitting.pc.start(['t']);
    await waitFor('done', () => splitting.pc.stats().processed === 40);
    await splitting.pc.stop();
    assert.ok(maxRunning > 1, 'the designated hot key still ran one at a time');
    assertAllCommitted(split);
  });

  it('runs a CPU-bound handler on piscina workers', async () => {
    const group = FakeGroup.withKeys(2, 30, 7);
    const filename = fileURLToPath(new URL('./hash_worker.js', import.meta.url));
    let failed: unknown = null;
    const h = harness(group, { piscina: { filename, maxThreads: 2 }, retries: { max: 0 }, onError: (e) => (failed = e) });
    await h.pc.start(['t']);
    await waitFor('all processed', () => h.pc.stats().processed === 60 || h.pc.stats().failed > 0, 20_000);
    await h.pc.stop();
    assert.equal(failed, null);
    assert.equal(h.pc.stats().processed, 60);
    assertAllCommitted(group);
  });
});
