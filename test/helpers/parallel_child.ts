// Test helper process (its own main thread): one ParallelConsumer in a group, for the e2e crash
// test. Its handler waits a few random ms (much longer for "slow" keys, so incomplete offsets sit
// below completed ones) and then appends "partition offset" for the message to --out, before it
// resolves: a line is written only for work that finished, and every offset the consumer marks
// complete (and so may commit) has its line already. Prints "started" once subscribed; on
// SIGTERM it stops gracefully (drain, final commit, leave) and exits 0; SIGKILL is the crash.
// Values are "key seq" (see test/e2e/parallel_consumer.test.ts); the slow keys are the indexes
// divisible by --slow-every (0 = none).
// Run: node parallel_child.js --bootstrap H:P --topic T --group G --out FILE [--protocol classic]
//      [--concurrency N] [--commit-ms MS] [--slow-every N] [--slow-ms MS] [--max-ms MS]
import { appendFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import type { ConsumerMessage, GroupProtocol } from '../../src/client/consumer/types.js';
import { ParallelConsumer } from '../../src/client/parallel/parallel_consumer.js';

const { values } = parseArgs({
  options: {
    bootstrap: { type: 'string' },
    topic: { type: 'string' },
    group: { type: 'string' },
    out: { type: 'string' },
    protocol: { type: 'string', default: 'classic' },
    concurrency: { type: 'string', default: '16' },
    'commit-ms': { type: 'string', default: '200' },
    'slow-every': { type: 'string', default: '0' },
    'slow-ms': { type: 'string', default: '250' },
    'max-ms': { type: 'string', default: '10' },
  },
});

function required(name: 'bootstrap' | 'topic' | 'group' | 'out'): string {
  const v = values[name];
  if (v === undefined) throw new Error(`--${name} is required`);
  return v;
}

const out = required('out');
const slowEvery = Number(values['slow-every']);
const slowMs = Number(values['slow-ms']);
const maxMs = Number(values['max-ms']);

function delayFor(m: ConsumerMessage): number {
  const key = Number((m.value ?? Buffer.alloc(0)).toString('latin1').split(' ', 1)[0]);
  if (slowEvery > 0 && key % slowEvery === 0) return slowMs;
  return 1 + Math.random() * (maxMs - 1);
}

const consumer = new ParallelConsumer({
  consumer: {
    brokers: [required('bootstrap')], clientId: 'parallel-child', groupId: required('group'),
    groupProtocol: values.protocol as GroupProtocol, autoOffsetReset: 'earliest', maxWaitMs: 200,
    sessionTimeoutMs: 2000, rebalanceTimeoutMs: 5000, heartbeatIntervalMs: 300,
  },
  concurrency: Number(values.concurrency),
  commitIntervalMs: Number(values['commit-ms']),
  ordering: 'key',
  onError: (err, context) => process.stderr.write(`error (${context}): ${String(err)}\n`),
  handler: async (m, signal) => {
    await sleep(delayFor(m), undefined, { signal });
    appendFileSync(out, `${m.partition} ${m.offset}\n`);
  },
});

process.once('SIGTERM', () => {
  consumer.stop().then(
    () => process.exit(0),
    (err: unknown) => {
      process.stderr.write(`stop failed: ${String(err)}\n`);
      process.exit(1);
    },
  );
});

await consumer.start([required('topic')]);
process.stdout.write('started\n');
