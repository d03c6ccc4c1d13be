// --watch and the progress line, without a terminal: snapshots repeat until the signal, separated
// by blank lines, with the last exit code (a failing snapshot counts 1 and the loop goes on); the
// progress text carries rate and ETA from an injected clock; with no terminal nothing is drawn.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConnectionError } from '../../../src/client/connection.js';
import { parseArgs } from '../../../src/cli/args.js';
import type { CliIo } from '../../../src/cli/io.js';
import { progressBar, progressText } from '../../../src/cli/progress.js';
import { WATCH_OPTION, watch, watchInterval } from '../../../src/cli/watch.js';

function capture(): { io: CliIo; out: string[]; drawn: string[] } {
  const out: string[] = [];
  const drawn: string[] = [];
  return { io: { env: {}, out: (t) => out.push(t), err: (t) => out.push(t), progress: (t) => drawn.push(t) }, out, drawn };
}

test('--watch takes an optional number of seconds', () => {
  const spec = [WATCH_OPTION, { name: 'format' }];
  assert.equal(watchInterval(parseArgs(['--watch'], spec, false)), 2000);
  assert.equal(watchInterval(parseArgs(['--watch', '5', '--format', 'json'], spec, false)), 5000);
  assert.deepEqual(parseArgs(['--watch', 'name'], spec, false).positionals, ['name']);
  assert.equal(watchInterval(parseArgs([], spec, false)), null);
  assert.throws(() => watchInterval(parseArgs(['--watch=0'], spec, false)), /--watch takes seconds/);
});

test('snapshots until aborted, blank-line separated off a terminal, exit code of the last', async () => {
  const { io, out } = capture();
  const abort = new AbortController();
  let n = 0;
  const code = await watch(1, async () => {
    n++;
    if (n === 2) throw new ConnectionError('cannot connect to 127.0.0.1:1: connect ECONNREFUSED 127.0.0.1:1');
    if (n === 3) abort.abort();
    return { text: `snap ${n}`, exitCode: n === 1 ? 0 : 3 };
  }, io, abort.signal);
  assert.equal(code, 3);
  assert.deepEqual(out, ['snap 1', '', 'sluice: no broker at 127.0.0.1:1: is `sluice start` running? (set --brokers HOST:PORT)']);
});

test('progress: rate and ETA from the clock; a counter without a total; nothing without a terminal', () => {
  assert.equal(progressText('consume t', 'records', 50, 100, 10_000), 'consume t [##########----------] 50% 50/100 records 5.0 records/s ETA 10s');
  assert.equal(progressText('produce t', 'records', 300, null, 1_000), 'produce t 300 records 300 records/s');
  let now = 0;
  const { io, drawn } = capture();
  const bar = progressBar(io, 'x', 'records', () => now);
  bar.start(10, 0);
  now = 50;
  bar.update(1);
  now = 1000;
  bar.update(5);
  bar.stop();
  assert.deepEqual(drawn.length, 3, 'the update 50 ms after the first draw is skipped');
  assert.match(drawn[1] ?? '', /50% 5\/10 records 5\.0 records\/s ETA 1s/);
  assert.equal(drawn[2], '');
  const silent = progressBar({ env: {}, out: () => undefined, err: () => undefined }, 'x', 'records');
  silent.start(1, 0);
  silent.stop();
});
