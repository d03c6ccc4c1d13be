// --watch and the progress line, without a terminal: snapshots repeat until the signal, separated
// by blank lines, with the last exit code (a failing snapshot counts 1 and the loop goes on); the
// progress bar (cli-progress on a fake terminal) carries rate and ETA; with no terminal nothing is drawn.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { ConnectionError } from '../../../src/client/connection.js';
import { parseArgs } from '../../../src/cli/args.js';
import type { CliIo } from '../../../src/cli/io.js';
import { progressBar } from '../../../src/cli/progress.js';
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

/** A stand-in for a terminal's stderr: what cli-progress writes, and the text left on its line. */
function fakeTerminal(): { stream: Writable & { isTTY: boolean; columns: number }; lines: () => string[] } {
  const chunks: string[] = [];
  const stream = Object.assign(new Writable({ write: (chunk: Buffer, _enc, done) => { chunks.push(chunk.toString()); done(); } }), { isTTY: true, columns: 200 });
  // Each draw starts by moving the cursor to column 1 (CSI 1 G); other control sequences are dropped.
  const lines = (): string[] => chunks.join('').split('\x1b[1G').map((l) => l.replace(/\x1b(\[[0-9;?]*[A-Za-z]|[78])/g, '')).filter((l) => l !== '');
  return { stream, lines };
}

test('progress: a bar with rate and ETA on the terminal stream; a counter without a total; nothing without a terminal', async () => {
  const { io } = capture();
  const term = fakeTerminal();
  const bar = progressBar({ ...io, progressStream: term.stream }, 'consume t', 'records');
  bar.start(10, 0);
  await new Promise((r) => setTimeout(r, 300));
  bar.update(5);
  bar.stop();
  const drawn = term.lines();
  assert.match(drawn[0] ?? '', /^consume t \[-{20}\] 0% 0\/10 records 0\.0 records\/s ETA /);
  assert.ok(drawn.some((l) => /^consume t \[={10}-{10}\] 50% 5\/10 records \d+(\.\d)? records\/s ETA \d+s$/.test(l)), drawn.join(' | '));
  assert.equal(term.stream.writableLength, 0);

  // Records arrive in bursts within a millisecond: the ETA must still come from the rate so far.
  const bursty = fakeTerminal();
  const burst = progressBar({ ...io, progressStream: bursty.stream }, 'produce t', 'records');
  burst.start(1000, 0);
  await new Promise((r) => setTimeout(r, 300));
  for (let v = 1; v <= 100; v++) burst.update(v);
  burst.stop();
  const last = bursty.lines().filter((l) => l.includes('100/1000')).at(-1) ?? '';
  // 100 records in at least 300 ms leave 900 for at least 2.7 s; a rate read off the burst says 1 s or less.
  assert.match(last, /ETA ([3-9]|\d{2,})s$|ETA \d+m\d+s$/, bursty.lines().join(' | '));

  const counter = fakeTerminal();
  const open = progressBar({ ...io, progressStream: counter.stream }, 'produce t', 'records');
  open.start(null, 0);
  open.update(300);
  open.stop();
  assert.ok(counter.lines().some((l) => /^produce t 300 records \d+(\.\d)? records\/s$/.test(l)), counter.lines().join(' | '));

  const silent = progressBar(io, 'x', 'records');
  silent.start(1, 0);
  silent.update(1);
  silent.stop();
});
