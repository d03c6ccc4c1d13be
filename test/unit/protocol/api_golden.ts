// Test-only golden check for one API version (main thread, tests only): the codec must encode
// `value` to exactly the hand-built `bytes`, and decode `bytes` back to `value`, consuming all of
// them. `value` therefore lists every property of the struct, with defaults where the version
// lacks the field, because decode always fills absent fields with their defaults.

import assert from 'node:assert/strict';
import { Reader } from '../../../src/protocol/reader.js';
import { Writer } from '../../../src/protocol/writer.js';
import type { Api } from '../../../src/protocol/schema.js';

type Direction = 'request' | 'response';

function check(direction: Direction, version: number, encode: (w: Writer) => void,
  decode: (r: Reader) => unknown, value: unknown, bytes: Buffer): void {
  const w = new Writer(16);
  encode(w);
  const encoded = Buffer.concat(w.finish());
  assert.equal(encoded.toString('hex'), bytes.toString('hex'), `${direction} v${version} encode`);
  const r = new Reader(bytes);
  assert.deepStrictEqual(decode(r), value, `${direction} v${version} decode`);
  assert.equal(r.remaining(), 0, `${direction} v${version} left bytes unread`);
}

export function goldenRequest<Req, Res>(api: Api<Req, Res>, version: number, req: Req, bytes: Buffer): void {
  check('request', version, (w) => api.encodeRequest(version, req, w),
    (r) => api.decodeRequest(version, r), req, bytes);
}

export function goldenResponse<Req, Res>(api: Api<Req, Res>, version: number, res: Res, bytes: Buffer): void {
  check('response', version, (w) => api.encodeResponse(version, res, w),
    (r) => api.decodeResponse(version, r), res, bytes);
}
