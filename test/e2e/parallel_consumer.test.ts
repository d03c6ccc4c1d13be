// The parallel consumer (src/client/parallel) against a real Sluice broker process, input produced
// with kafkajs: 12 partitions, 1200 keys × 8 per-key sequence numbers, values "key seq", laid out
// in blocks of 60 keys so a key's next message follows a few offsets later in its partition.
//  (a) a consumer child process SIGKILLed mid-stream and restarted: everything is completed at
//      least once, nothing the broker's committed offset + metadata records as complete is
//      processed again, and everything so recorded had really been completed (classic protocol,
//      2 s session: the broker's KIP-848 session timeout is fixed at 45 s, too long to wait out);
//  (b) three in-process instances, one added and one stopped mid-stream (KIP-848 hand-overs with
//      commits on revoke): every message processed exactly once, per-key order across owners;
//  (c) concurrency 256: ordering 'key' keeps per-key order, 'unordered' visibly does not (so the
//      order check can fail).
// Runs on the test's main thread (plus the child processes of (a)). Every wait is bounded; the
// broker, the children and the consumers are stopped in `after`.
import { after, afterEach, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleepAbortable } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import type { Admin, Producer } from 'kafkajs';
import { KafkaConnection } from '../../src/client/connection.js';
import type { ConsumerMessage } from '../../src/client/consumer/types.js';
import { fetchGroupOffsets } from '../../src/client/group_admin.js';
import { Ordering } from '../../src/client/parallel/key_router.js';
import { decodeOffsetMetadata } from '../../src/client/parallel/offset_codec.js';
import { ParallelConsumer } from '../../src/client/parallel/parallel_consumer.js';
import type { ParallelConsumerOptions } from '../../src/client/parallel/parallel_consumer.js';
import type { MessageHandler } from '../../src/client/parallel/ports.js';
import { BrokerProcess, sleep, withTimeout } from '../helpers/broker_process.js';
import { connectedProducer, kafkajsClient } from '../helpers/kafkajs_client.js';
import { LineChild, killAll } from '../helpers/line_child.js';

const CHILD = fileURLToPath(new URL('../helpers/parallel_child.js', import.meta.url));
const TOPIC = 'pc-input';
const PARTITIONS = 12;
const KEYS = 1200;
const SEQS = 8;
const BLOCK = 60;
const TOTAL = KEYS * SEQS;

let broker: BrokerProcess;
let admin: Admin;
let producer: Producer;
let conn: KafkaConnection;
let logEnds: number[] = [];
const open: ParallelConsumer[] = [];
const children: LineChild[] = [];
const scratch = mkdtempSync(join(tmpdir(), 'sluice-pc-e2e-'));

before(async () => {
  broker = await BrokerProcess.start({
    args: ['--group-initial-rebalance-delay-ms', '0', '--group-consumer-heartbeat-interval-ms', '300', '--group-min-session-timeout-ms', '1000'],
  });
  const kafka = kafkajsClient(broker.bootstrap, 'parallel-consumer-e2e');
  admin = kafka.admin();
  await admin.connect();
  producer = await connectedProducer(kafka);
  await admin.createTopics({ topics: [{ topic: TOPIC, numPartitions: PARTITIONS }], waitForLeaders: true });
  await produceInput();
  const ends = await admin.fetchTopicOffsets(TOPIC);
  logEnds = Array.from({ length: PARTITIONS }, (_, p) => Number(ends.find((e) => e.partition === p)?.high ?? -1));
  assert.equal(logEnds.reduce((x, y) => x + y, 0), TOTAL);
  conn = await KafkaConnection.connect({ host: broker.host, port: broker.kafkaPort, clientId: 'pc-e2e-offsets', requestTimeoutMs: 10_000 });
});

afterEach((t) => broker?.noteResult(t));

after(async () => {
  await killAll(children);
  for (const pc of open) await withTimeout(pc.stop(), 15_000, 'parallel consumer stop').catch(() => undefined);
  await conn?.close().catch(() => undefined);
  await producer?.disconnect().catch(() => undefined);
  await admin?.disconnect().catch(() => undefined);
  await broker?.dispose();
  rmSync(scratch, { recursive: true, force: true });
});

/** Blocks of BLOCK keys, each block sending seq 0 of its keys, then seq 1, … (one send per block). */
async function produceInput(): Promise<void> {
  for (let first = 0; first < KEYS; first += BLOCK) {
    const messages: { key: string; value: string }[] = [];
    for (let seq = 0; seq < SEQS; seq++) {
      for (let key = first; key < first + BLOCK; key++) messages.push({ key: `k${key}`, value: `${key} ${seq}` });
    }
    await producer.send({ topic: TOPIC, messages, acks: -1 });
  }
}

async function waitFor(what: string, ok: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(25);
  }
}

const at = (partition: number, offset: number): string => `${partition} ${offset}`;

/** Every input message as "partition offset". */
function allInput(): Set<string> {
  const out = new Set<string>();
  logEnds.forEach((end, p) => {
    for (let o = 0; o < end; o++) out.add(at(p, o));
  });
  return out;
}

// ---- in-process runs: what each handler call saw, and when ----

interface Processed {
  readonly key: number;
  readonly seq: number;
  readonly where: string;
  readonly who: string;
  readonly start: number;
  readonly end: number;
}

class Recorder {
  readonly records: Processed[] = [];
  readonly errors: string[] = [];
  readonly times = new Map<string, number>();
  private readonly perWho = new Map<string, number>();

  handler(who: string, maxDelayMs: number): MessageHandler {
    return async (m: ConsumerMessage, signal: AbortSignal) => {
      const start = performance.now();
      await sleepAbortable(Math.random() * maxDelayMs, undefined, { signal });
      this.add(m, who, start, performance.now());
    };
  }

  onError(who: string): (err: unknown, context: string) => void {
    return (err, context) => {
      if (this.errors.length < 20) this.errors.push(`${who} ${context}: ${String(err)}`);
    };
  }

  get distinct(): number {
    return this.times.size;
  }

  by(who: string): number {
    return this.perWho.get(who) ?? 0;
  }

  /** Input positions processed more than once. */
  repeats(): string[] {
    return [...this.times].filter(([, n]) => n > 1).map(([where, n]) => `${where} ×${n}`);
  }

  private add(m: ConsumerMessage, who: string, start: number, end: number): void {
    const [key, seq] = (m.value ?? Buffer.alloc(0)).toString('latin1').split(' ').map(Number) as [number, number];
    const where = at(m.partition, m.offset);
    this.records.push({ key, seq, where, who, start, end });
    this.times.set(where, (this.times.get(where) ?? 0) + 1);
    this.perWho.set(who, this.by(who) + 1);
  }
}

/**
 * Per key, in start order: the sequence numbers must be 0, 1, 2, … and each message must start
 * after the previous one of its key ended. Returns the breaches (at most `limit`) and their count.
 */
function orderViolations(records: readonly Processed[], limit = 10): { count: number; sample: string[] } {
  const byKey = new Map<number, Processed[]>();
  for (const r of records) {
    const list = byKey.get(r.key);
    if (list === undefined) byKey.set(r.key, [r]);
    else list.push(r);
  }
  let count = 0;
  const sample: string[] = [];
  for (const [key, list] of byKey) {
    list.sort((x, y) => x.start - y.start);
    list.forEach((r, i) => {
      const prev = list[i - 1];
      let breach: string | null = null;
      if (r.seq !== i) breach = `key ${key}: seq ${r.seq} started as #${i}`;
      else if (prev !== undefined && r.start < prev.end) breach = `key ${key}: seq ${r.seq} (${r.who}) started before seq ${prev.seq} (${prev.who}) ended`;
      if (breach === null) return;
      count++;
      if (sample.length < limit) sample.push(breach);
    });
  }
  return { count, sample };
}

function parallel(group: string, rec: Recorder, who: string, options: Partial<ParallelConsumerOptions> & { maxDelayMs: number }): ParallelConsumer {
  const { maxDelayMs, ...rest } = options;
  const pc = new ParallelConsumer({
    consumer: {
      brokers: [broker.bootstrap], clientId: `pc-e2e-${who}`, groupId: group, groupProtocol: 'consumer',
      autoOffsetReset: 'earliest', maxWaitMs: 200, heartbeatIntervalMs: 300, sessionTimeoutMs: 10_000, rebalanceTimeoutMs: 10_000,
    },
    handler: rec.handler(who, maxDelayMs),
    commitIntervalMs: 200,
    onError: rec.onError(who),
    ...rest,
  });
  open.push(pc);
  return pc;
}

// ---- (a) crash and restart, in child processes ----

/** "partition offset" lines of a child's output file, in order (a torn last line is ignored). */
function completions(file: string): string[] {
  const lines = readFileSync(file, 'latin1').split('\n');
  lines.pop();
  return lines;
}

function startChild(name: string, group: string, out: string): LineChild {
  writeFileSync(out, '');
  const args = [
    CHILD, '--bootstrap', broker.bootstrap, '--topic', TOPIC, '--group', group, '--out', out, '--protocol', 'classic',
    '--concurrency', '16', '--commit-ms', '200', '--slow-every', '100', '--slow-ms', '250', '--max-ms', '10',
  ];
  const child = new LineChild(name, process.execPath, args, 40_000);
  children.push(child);
  return child;
}

/** The completed set the group's commits record: below each committed offset, plus the runs in its metadata. */
async function committedComplete(group: string): Promise<{ complete: Set<string>; above: number; partitionsAbove: number }> {
  const committed = await fetchGroupOffsets(conn, group);
  const complete = new Set<string>();
  let above = 0;
  let partitionsAbove = 0;
  for (const c of committed) {
    if (c.topic !== TOPIC) continue;
    const runs = decodeOffsetMetadata(c.metadata, c.offset);
    assert.ok(runs !== null, `partition ${c.partition}: metadata ${JSON.stringify(c.metadata)} does not decode at offset ${c.offset}`);
    for (let o = 0; o < c.offset; o++) complete.add(at(c.partition, o));
    for (let o = c.offset; o < runs.end; o++) if (runs.has(o)) complete.add(at(c.partition, o));
    above += runs.count;
    if (runs.count > 0) partitionsAbove++;
  }
  return { complete, above, partitionsAbove };
}

/** Lines seen before, in order. */
function duplicates(lines: readonly string[]): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const l of lines) {
    if (seen.has(l)) out.push(l);
    seen.add(l);
  }
  return out;
}

describe('parallel consumer, crash and restart (child processes, classic protocol)', () => {
  it('completes everything at least once and never reprocesses what the commits recorded as complete', { timeout: 60_000 }, async (t) => {
    const group = 'pc-crash';
    const run1 = join(scratch, 'run1.txt');
    const run2 = join(scratch, 'run2.txt');
    const first = startChild('pc-child-1', group, run1);
    const killAt = Math.floor(TOTAL * (0.2 + Math.random() * 0.5));
    await first.waitFor(`${killAt} completions`, () => completions(run1).length >= killAt, 25_000);
    const killed = await first.stop(5000, 'SIGKILL');
    assert.equal(killed.signal, 'SIGKILL');
    await sleep(300); // a commit written just before the kill is applied by now
    const done1 = completions(run1);
    const { complete, above, partitionsAbove } = await committedComplete(group);
    t.diagnostic(`killed after ${done1.length} completions (target ${killAt}); commits record ${complete.size} complete, ${above} of them above the committed offset in ${partitionsAbove} partitions`);

    const doneBefore = new Set(done1);
    const phantom = [...complete].filter((x) => !doneBefore.has(x));
    assert.deepEqual(phantom.slice(0, 10), [], 'the commits record as complete only messages whose handler finished');
    assert.ok(complete.size > 0, 'the first run committed something before the kill');
    assert.ok(above > 0, 'the commit metadata carried completed offsets above the committed offset (the slow keys left gaps)');

    const second = startChild('pc-child-2', group, run2);
    const everything = allInput();
    await second.waitFor('every message completed across both runs', () => {
      const union = new Set(done1);
      for (const x of completions(run2)) union.add(x);
      return union.size === everything.size;
    }, 30_000);
    const stopped = await second.stop(15_000);
    assert.equal(stopped.code, 0, `second run exit: ${second.stderrTail()}`);

    const done2 = completions(run2);
    const union = new Set([...done1, ...done2]);
    assert.deepEqual([...everything].filter((x) => !union.has(x)).slice(0, 10), [], 'every input message completed');
    assert.equal(union.size, TOTAL);
    assert.deepEqual(done2.filter((x) => complete.has(x)).slice(0, 10), [], 'nothing recorded complete is processed by the second run');
    assert.deepEqual(duplicates(done1).slice(0, 10), [], 'no repeats within the first run');
    assert.deepEqual(duplicates(done2).slice(0, 10), [], 'no repeats within the second run');
    const redone = done2.filter((x) => doneBefore.has(x)).length;
    t.diagnostic(`second run completed ${done2.length}; ${redone} of them had completed in the first run after its last commit`);
  });
});

// ---- (b) rebalance mid-stream, three in-process instances ----

describe('parallel consumer, rebalance mid-stream (KIP-848)', () => {
  it('hands partitions over on join and on graceful leave: exactly once, per-key order across owners', { timeout: 45_000 }, async (t) => {
    const group = 'pc-rebalance';
    const rec = new Recorder();
    const options = { concurrency: 8, maxDelayMs: 16 };
    const a = parallel(group, rec, 'a', options);
    const b = parallel(group, rec, 'b', options);
    await a.start([TOPIC]);
    await b.start([TOPIC]);
    await waitFor('a quarter of the input', () => rec.distinct >= TOTAL / 4, 20_000);
    const c = parallel(group, rec, 'c', options);
    await c.start([TOPIC]);
    await waitFor('c to take over partitions and process', () => rec.by('c') >= 100, 20_000);
    const beforeStop = rec.distinct;
    assert.ok(beforeStop < TOTAL * 0.9, `a stops mid-stream (${beforeStop} of ${TOTAL} done already)`);
    await withTimeout(a.stop(), 15_000, 'a stop');
    const byA = rec.by('a');
    await waitFor('all of the input', () => rec.distinct >= TOTAL, 25_000);
    await withTimeout(Promise.all([b.stop(), c.stop()]), 15_000, 'b and c stop');
    t.diagnostic(`a ${byA} (stopped at ${beforeStop} done), b ${rec.by('b')}, c ${rec.by('c')}; errors: ${rec.errors.join('; ') || 'none'}`);

    assert.equal(rec.by('a'), byA, 'a processed nothing after its stop resolved');
    assert.ok(rec.by('b') > 0 && rec.by('c') > 0);
    assert.equal(rec.distinct, TOTAL);
    assert.deepEqual(rec.repeats().slice(0, 10), [], 'every message processed exactly once across the hand-overs');
    const order = orderViolations(rec.records);
    assert.deepEqual(order.sample, [], `${order.count} per-key order violations`);
  });
});

// ---- (c) per-key order at high concurrency ----

describe('parallel consumer, concurrency 256', () => {
  async function runAll(ordering: Ordering): Promise<Recorder> {
    const rec = new Recorder();
    const pc = parallel(`pc-order-${ordering}`, rec, ordering, { concurrency: 256, ordering, maxDelayMs: 5 });
    await pc.start([TOPIC]);
    await waitFor(`all of the input (${ordering})`, () => rec.distinct >= TOTAL, 25_000);
    await withTimeout(pc.stop(), 15_000, `${ordering} stop`);
    assert.equal(rec.distinct, TOTAL);
    assert.deepEqual(rec.repeats().slice(0, 10), [], 'exactly once');
    return rec;
  }

  it("ordering 'key': every message, no per-key order violation", { timeout: 30_000 }, async () => {
    const rec = await runAll(Ordering.key);
    const order = orderViolations(rec.records);
    assert.deepEqual(order.sample, [], `${order.count} per-key order violations`);
  });

  it("ordering 'unordered': every message, and the same check finds order violations", { timeout: 30_000 }, async (t) => {
    const rec = await runAll(Ordering.unordered);
    const order = orderViolations(rec.records);
    t.diagnostic(`${order.count} per-key order violations without ordering`);
    assert.ok(order.count > 0, 'random delays at concurrency 256 must break per-key order somewhere');
  });
});
