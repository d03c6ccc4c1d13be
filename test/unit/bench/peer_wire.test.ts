// The peers' wire readers: RESP replies and NATS operations come out whole and in order however
// the socket splits the bytes (every split point of a fixed transcript), binary payloads intact.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { NatsReader, RespError, RespReader, natsPub, respCommand } from '../../../src/bench/peer_wire.js';
import type { NatsOp, RespValue } from '../../../src/bench/peer_wire.js';

function chunks(bytes: Buffer, cuts: readonly number[]): Buffer[] {
  const at = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  const out: Buffer[] = [];
  let from = 0;
  for (const c of [...at, bytes.length]) {
    if (c > from) out.push(bytes.subarray(from, c));
    from = Math.max(from, c);
  }
  return out;
}

const binary = Buffer.from([0, 13, 10, 36, 42, 255]);
const respTranscript = Buffer.concat([
  Buffer.from('+OK\r\n-ERR wrong type\r\n:42\r\n$-1\r\n*-1\r\n'),
  Buffer.from(`$${binary.length}\r\n`), binary, Buffer.from('\r\n'),
  Buffer.from('*1\r\n*2\r\n$1\r\ns\r\n*1\r\n*2\r\n$3\r\n1-0\r\n*2\r\n$1\r\nv\r\n$2\r\nab\r\n'),
]);
const respExpected: RespValue[] = ['OK', new RespError('ERR wrong type'), 42, null, null, binary, [[Buffer.from('s'), [[Buffer.from('1-0'), [Buffer.from('v'), Buffer.from('ab')]]]]]];

describe('RespReader', () => {
  it('parses a transcript whole whatever the chunking', () => {
    fc.assert(fc.property(fc.array(fc.nat(), { maxLength: 12 }), (cuts) => {
      const reader = new RespReader();
      const got = chunks(respTranscript, cuts).flatMap((c) => reader.push(c));
      assert.deepEqual(got, respExpected);
    }));
  });

  it('frames commands as arrays of bulk strings', () => {
    assert.equal(respCommand(['XADD', 's', Buffer.from('ab')]).toString(), '*3\r\n$4\r\nXADD\r\n$1\r\ns\r\n$2\r\nab\r\n');
  });
});

describe('NatsReader', () => {
  const transcript = Buffer.concat([
    Buffer.from('INFO {"server_id":"x"}\r\nPING\r\n+OK\r\n'),
    Buffer.from(`MSG a.b 1 ${binary.length}\r\n`), binary, Buffer.from('\r\n'),
    Buffer.from('MSG a.c 2 _INBOX.r 0\r\n\r\n-ERR \'Unknown Protocol Operation\'\r\nPONG\r\n'),
  ]);
  const expected: NatsOp[] = [
    { op: 'INFO', info: '{"server_id":"x"}' }, { op: 'PING' }, { op: '+OK' },
    { op: 'MSG', subject: 'a.b', sid: '1', replyTo: null, payload: binary },
    { op: 'MSG', subject: 'a.c', sid: '2', replyTo: '_INBOX.r', payload: Buffer.alloc(0) },
    { op: '-ERR', message: '\'Unknown Protocol Operation\'' }, { op: 'PONG' },
  ];

  it('parses a transcript whole whatever the chunking', () => {
    fc.assert(fc.property(fc.array(fc.nat(), { maxLength: 12 }), (cuts) => {
      const reader = new NatsReader();
      assert.deepEqual(chunks(transcript, cuts).flatMap((c) => reader.push(c)), expected);
    }));
  });

  it('frames PUB with and without a reply subject', () => {
    assert.equal(natsPub('s', null, Buffer.from('hi')).toString(), 'PUB s 2\r\nhi\r\n');
    assert.equal(natsPub('s', 'r', Buffer.from('hi')).toString(), 'PUB s r 2\r\nhi\r\n');
  });
});
