// Test helper: drives test/interop/kafka_python_client.py (kafka-python 2.0.2 under
// /usr/bin/python3) and converts messages to and from its hex line format. Runs on the test's
// main thread; the script path is resolved from this compiled file (dist*/test/helpers -> repo).

import assert from 'node:assert/strict';
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { assertOk, run } from './child.js';
import type { TestMessage } from './messages.js';

export const PYTHON = '/usr/bin/python3';
export const KAFKA_PYTHON_SCRIPT = fileURLToPath(new URL('../../../test/interop/kafka_python_client.py', import.meta.url));

export function pythonLine(partition: number, m: TestMessage): string {
  const headers = m.headers.map((h) => `${h.key}=${h.value.toString('hex')}`).join(',');
  return `${partition} ${m.key === null ? '-' : m.key.toString('hex')} ${m.value.toString('hex')} ${headers}\n`;
}

/** Writes the script's input file for messages 0..n-1 (bounded memory: streamed). */
export async function writePythonInput(path: string, n: number, make: (i: number) => { partition: number; message: TestMessage }): Promise<void> {
  const out = createWriteStream(path);
  for (let i = 0; i < n; i++) {
    const { partition, message } = make(i);
    if (!out.write(pythonLine(partition, message))) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
}

export interface PythonRecord {
  partition: number;
  offset: number;
  key: Buffer | null;
  value: Buffer | null;
  headers: { key: string; value: Buffer }[];
}

export function parsePythonLine(line: string): PythonRecord {
  const [partition, offset, key, value, headers] = line.split(' ');
  assert.ok(partition !== undefined && offset !== undefined && key !== undefined && value !== undefined, `bad line ${line}`);
  return {
    partition: Number(partition),
    offset: Number(offset),
    key: key === '-' ? null : Buffer.from(key, 'hex'),
    value: value === '-' ? null : Buffer.from(value, 'hex'),
    headers: headers === undefined || headers === '' ? [] : headers.split(',').map((h) => {
      const [k, v] = h.split('=');
      return { key: k ?? '', value: Buffer.from(v ?? '', 'hex') };
    }),
  };
}

/** Checks a record read by kafka-python against the message that was sent. */
export function assertPythonRecord(r: PythonRecord, m: TestMessage, where: string): void {
  assert.ok(r.value !== null && r.value.equals(m.value), `${where}: value at ${r.partition}/${r.offset}`);
  assert.deepEqual(r.key, m.key, `${where}: key at ${r.partition}/${r.offset}`);
  assert.deepEqual(r.headers, m.headers.map((h) => ({ key: h.key, value: h.value })), `${where}: headers at ${r.partition}/${r.offset}`);
}

export interface PythonSummary {
  sent?: number;
  errors?: number;
  received?: number;
  api_version: number[];
}

/** Runs one verb of the script; its last line of output, JSON, is the answer (PythonSummary for produce and consume). */
export async function kafkaPython<T = PythonSummary>(args: readonly string[], timeoutMs: number): Promise<T> {
  const r = assertOk(await run(PYTHON, [KAFKA_PYTHON_SCRIPT, ...args], { timeoutMs }), `kafka-python ${args[0]}`);
  const lines = r.stdout.toString().trim().split('\n');
  return JSON.parse(lines[lines.length - 1] ?? '{}') as T;
}

/** kafka-python's inferred broker version must be at least 2.1 (Produce v7 / Fetch v4 path). */
export function assertModernApiVersion(v: readonly number[]): void {
  const [major = 0, minor = 0] = v;
  assert.ok(major > 2 || (major === 2 && minor >= 1), `kafka-python inferred broker version ${v.join('.')}, expected >= 2.1`);
}

const ROUND_TRIP_SCRIPT = `
import json, sys
from kafka import KafkaConsumer, KafkaProducer, TopicPartition
common, topic, count = json.loads(sys.argv[1]), sys.argv[2], int(sys.argv[3])
p = KafkaProducer(**common)
for i in range(count):
    p.send(topic, ('py-%d' % i).encode(), partition=0).get(timeout=20)
p.close()
c = KafkaConsumer(group_id=None, consumer_timeout_ms=5000, **common)
tp = TopicPartition(topic, 0)
c.assign([tp])
c.seek_to_beginning(tp)
print(json.dumps([m.value.decode() for m in c]))
`;

/**
 * kafka-python produces py-0..py-(count-1) to partition 0 of `topic` and reads the partition back
 * from the beginning, with `settings` as its producer and consumer keyword arguments
 * (bootstrap_servers, security_protocol, ssl_cafile, ...); the values read.
 */
export async function kafkaPythonRoundTrip(settings: Readonly<Record<string, string>>, topic: string, count: number): Promise<string[]> {
  const r = await run(PYTHON, ['-c', ROUND_TRIP_SCRIPT, JSON.stringify(settings), topic, String(count)], { timeoutMs: 60_000 });
  assert.equal(r.code, 0, r.stderr);
  const lines = r.stdout.toString().trim().split('\n');
  return JSON.parse(lines[lines.length - 1] ?? '[]') as string[];
}
