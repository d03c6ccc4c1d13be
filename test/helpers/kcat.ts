// Test helper: kcat (librdkafka 2.0.2) as a producer and consumer of binary messages. Runs on the
// test's main thread. Messages go in separated by multi-byte delimiters (MSG_DELIM between
// messages, KEY_DELIM between key and value; a message without KEY_DELIM has a null key), and
// come out in a length-prefixed format (%S/%K), so values may hold any bytes except the
// delimiters, which the encoder refuses.

import assert from 'node:assert/strict';
import type { TestMessage } from './messages.js';
import { assertOk, run } from './child.js';
import type { ChildResult } from './child.js';

export const KCAT = '/usr/bin/kcat';
export const MSG_DELIM = '\n--SLUICE-MSG--\n';
export const KEY_DELIM = '\t--SLUICE-KEY--\t';
/** One line of metadata, then the raw value and key: partition offset valueLen keyLen headers. */
export const CONSUME_FORMAT = '%p %o %S %K %h\\n%s%k';

const msgDelim = Buffer.from(MSG_DELIM);
const keyDelim = Buffer.from(KEY_DELIM);

/** kcat -P input for `messages` (headers are not per message with kcat; use -H). */
export function kcatInput(messages: Iterable<TestMessage>): Buffer {
  const parts: Buffer[] = [];
  for (const m of messages) {
    assert.ok(m.value.indexOf(msgDelim) < 0 && m.value.indexOf(keyDelim) < 0, 'value contains a kcat delimiter');
    if (parts.length > 0) parts.push(msgDelim);
    if (m.key !== null) parts.push(m.key, keyDelim);
    parts.push(m.value);
  }
  return Buffer.concat(parts);
}

export function produceArgs(bootstrap: string, topic: string, extra: readonly string[] = []): string[] {
  return ['-b', bootstrap, '-P', '-t', topic, '-D', MSG_DELIM, '-K', KEY_DELIM, '-X', 'api.version.request=true', ...extra];
}

export function consumeArgs(bootstrap: string, topic: string, partition: number | null, extra: readonly string[] = []): string[] {
  const p = partition === null ? [] : ['-p', String(partition)];
  return ['-b', bootstrap, '-C', '-t', topic, ...p, '-o', 'beginning', '-e', '-q', '-f', CONSUME_FORMAT, ...extra];
}

export interface KcatRecord {
  partition: number;
  offset: number;
  key: Buffer | null;
  value: Buffer | null;
  /** kcat's "n=v,n=v" rendering of the headers ('' when none). */
  headers: string;
}

/** Walks kcat's CONSUME_FORMAT output; calls `visit` for each record. */
export function parseKcatOutput(out: Buffer, visit: (r: KcatRecord) => void): number {
  let pos = 0;
  let count = 0;
  while (pos < out.length) {
    const eol = out.indexOf(0x0a, pos);
    assert.ok(eol > pos, `kcat output: no header line at byte ${pos}`);
    const fields = out.toString('latin1', pos, eol).split(' ');
    assert.ok(fields.length >= 5, `kcat output: bad header line ${out.toString('latin1', pos, eol)}`);
    const [partition, offset, valueLen, keyLen] = fields.slice(0, 4).map(Number) as [number, number, number, number];
    const headers = out.toString('utf8', pos + fields.slice(0, 4).join(' ').length + 1, eol);
    pos = eol + 1;
    const value = valueLen < 0 ? null : out.subarray(pos, pos + valueLen);
    pos += Math.max(0, valueLen);
    const key = keyLen < 0 ? null : out.subarray(pos, pos + keyLen);
    pos += Math.max(0, keyLen);
    assert.ok(pos <= out.length, 'kcat output: truncated record');
    visit({ partition, offset, key, value, headers });
    count++;
  }
  return count;
}

export async function kcat(args: readonly string[], opts: { input?: Buffer | { file: string }; stdoutFile?: string; timeoutMs?: number } = {}): Promise<ChildResult> {
  const r = await run(KCAT, args, { timeoutMs: opts.timeoutMs ?? 30_000, ...(opts.input === undefined ? {} : { input: opts.input }), ...(opts.stdoutFile === undefined ? {} : { stdoutFile: opts.stdoutFile }) });
  return assertOk(r, `kcat ${args.join(' ')}`);
}

/** Produces `values` (one per line) with kcat `args` (broker and security settings), then reads the topic back from the beginning. */
export async function kcatRoundTrip(args: readonly string[], topic: string, values: readonly string[]): Promise<string[]> {
  const produced = await run(KCAT, [...args, '-t', topic, '-P'], { timeoutMs: 30_000, input: Buffer.from(`${values.join('\n')}\n`) });
  assert.equal(produced.code, 0, produced.stderr);
  const consumed = await run(KCAT, [...args, '-t', topic, '-C', '-e', '-o', 'beginning', '-q'], { timeoutMs: 30_000 });
  assert.equal(consumed.code, 0, consumed.stderr);
  return consumed.stdout.toString().split('\n').filter((l) => l !== '');
}
