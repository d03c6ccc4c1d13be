// Test-only access to kafkajs 2.2.4's own protocol encoders/decoders (CommonJS, untyped), and
// the two byte helpers the cross-checks against them share: encode our response, decode a
// request kafkajs encoded (all of it must be consumed).
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { Reader } from '../../../src/protocol/reader.js';
import type { Api } from '../../../src/protocol/schema.js';
import { Writer } from '../../../src/protocol/writer.js';

export interface KjsRequest { encode(): Promise<{ buffer: Buffer }> }
export type KjsRequestFactory = (args: Record<string, unknown>) => KjsRequest;
export interface KjsResponse { decode(raw: Buffer): Promise<Record<string, unknown>> }

export const load = createRequire(import.meta.url);
export const kjsRequest = (path: string): KjsRequestFactory => load(`kafkajs/src/protocol/requests/${path}/request.js`) as KjsRequestFactory;
export const kjsResponse = (path: string): KjsResponse => load(`kafkajs/src/protocol/requests/${path}/response.js`) as KjsResponse;

export const TOPIC_ID = '6c1a2b3c4d5e4f60a1b2c3d4e5f60718';
export const TOPIC_ID_DASHED = '6c1a2b3c-4d5e-4f60-a1b2-c3d4e5f60718';

export function bytesOf<Res>(api: Api<unknown, Res>, version: number, res: Res): Buffer {
  const w = new Writer();
  api.encodeResponse(version, res, w);
  return Buffer.concat(w.finish());
}

export function decodeRequest<Req>(api: Api<Req, unknown>, version: number, bytes: Buffer): Req {
  const r = new Reader(bytes);
  const out = api.decodeRequest(version, r);
  assert.equal(r.remaining(), 0, `${api.name} v${version} request fully consumed`);
  return out;
}
