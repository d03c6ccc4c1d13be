// Test helper: deterministic test messages (binary values of varying size, null keys, binary
// headers) that any client can send and any reader can check byte for byte. Pure; any thread.
// Invariant: testMessage(tag, i) is a function of (tag, i) only, so a reader can rebuild what
// was sent without keeping it in memory, and the value starts with "tag:i:" so a stray record
// names its origin.

import assert from 'node:assert/strict';
import type { ConsumedRecord } from '../../src/protocol/records.js';

export interface TestMessage {
  readonly key: Buffer | null;
  readonly value: Buffer;
  readonly headers: readonly { readonly key: string; readonly value: Buffer }[];
}

/** xorshift32 bytes seeded by i: cheap, deterministic, covers every byte value. */
function noise(i: number, length: number): Buffer {
  const out = Buffer.allocUnsafe(length);
  let x = (i * 2654435761 + 1) >>> 0 || 1;
  for (let k = 0; k < length; k++) {
    x ^= x << 13; x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5; x >>>= 0;
    out[k] = x & 0xff;
  }
  return out;
}

export function testMessage(tag: string, i: number, maxNoise = 200): TestMessage {
  return {
    key: i % 7 === 3 ? null : Buffer.from(`key-${i % 1000}`),
    value: Buffer.concat([Buffer.from(`${tag}:${i}:`), noise(i, i % (maxNoise + 1))]),
    headers: i % 5 === 0 ? [] : [{ key: 'idx', value: Buffer.from(String(i)) }, { key: 'bin', value: Buffer.from([i & 0xff, 0, 0xff]) }],
  };
}

/** kafkajs's message shape (headers as an ordered object). */
export function kafkajsMessage(m: TestMessage): { key: Buffer | null; value: Buffer; headers: Record<string, Buffer> } {
  const headers: Record<string, Buffer> = {};
  for (const h of m.headers) headers[h.key] = h.value;
  return { key: m.key, value: m.value, headers };
}

/** The message index named by a value "tag:i:...", or -1 if the value is not from `tag`. */
export function messageIndex(tag: string, value: Buffer | null): number {
  if (value === null) return -1;
  const prefix = `${tag}:`;
  if (value.toString('latin1', 0, prefix.length) !== prefix) return -1;
  const end = value.indexOf(0x3a, prefix.length);
  return end < 0 ? -1 : Number(value.toString('latin1', prefix.length, end));
}

export function assertRecordIs(r: ConsumedRecord, m: TestMessage, where: string): void {
  assert.ok(r.value !== null && r.value.equals(m.value), `${where}: value differs at offset ${r.offset}`);
  assert.ok(r.key === null ? m.key === null : m.key !== null && r.key.equals(m.key), `${where}: key differs at offset ${r.offset}`);
  assert.equal(r.headers.length, m.headers.length, `${where}: header count differs at offset ${r.offset}`);
  r.headers.forEach((h, k) => {
    const sent = m.headers[k];
    assert.ok(sent !== undefined && h.key === sent.key && h.value !== null && h.value.equals(sent.value), `${where}: header ${k} differs at offset ${r.offset}`);
  });
}
