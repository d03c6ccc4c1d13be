// The request log through a real Connection: a debug line per request with client id, API,
// version, size and latency; a warn line (and a count) for a request served slower than the
// threshold, where a long-poll wait the handler reports as parked does not count; nothing at all
// per request at info; slow lines limited per API per interval, none lost from the count.
import assert from 'node:assert/strict';
import { createServer, Socket, type Server } from 'node:net';
import { Writable } from 'node:stream';
import { after, describe, it } from 'node:test';
import { pino } from 'pino';
import { Connection, HeldBytes } from '../../../src/net/connection.js';
import type { BoundHandler, HandlerContext } from '../../../src/net/handler.js';
import { RequestLog } from '../../../src/net/request_log.js';
import { MetadataApi, type MetadataResponse } from '../../../src/protocol/apis/metadata.js';
import { encodeRequestFrame, FrameReader } from '../../../src/protocol/framing.js';
import type { Wire } from '../../../src/protocol/schema.js';

const SLOW_MS = 40;

interface Logged { level: number; msg: string; [field: string]: unknown }

/** A broker-side listener whose Metadata handler takes `workMs`, reporting `parkedMs` of it as parked. */
async function listener(level: string, workMs: number, parkedMs: number): Promise<{ port: number; lines: Logged[]; slow: string[]; server: Server }> {
  const lines: Logged[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString().split('\n')) if (l !== '') lines.push(JSON.parse(l) as Logged);
      done();
    },
  });
  const log = pino({ level }, sink);
  const slow: string[] = [];
  const requestLog = new RequestLog(log, SLOW_MS, { requestSlow: (api) => slow.push(api) });
  const handlers = new Map<number, BoundHandler>([[MetadataApi.key, {
    api: MetadataApi,
    barrier: false,
    handle: async (ctx: HandlerContext): Promise<Wire<MetadataResponse>> => {
      await new Promise((resolve) => setTimeout(resolve, workMs));
      if (parkedMs > 0) ctx.parked?.(parkedMs);
      return { topics: [] };
    },
  }]]);
  const services = { handlers, metrics: { protocolError: () => {}, recordRequest: () => {}, addSocketBytesIn: () => {}, addSocketBytesOut: () => {} }, releaseLeases: () => {}, blockedShards: () => [], requestLog };
  const limits = { maxRequestBytes: 1 << 20, maxInflight: 8, idleTimeoutMs: 60_000, maxQueuedResponseBytes: 1 << 22 };
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    new Connection(socket, services, limits, new HeldBytes(1 << 24), log, () => {});
  });
  server.on('close', () => { for (const s of sockets) s.destroy(); });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as { port: number }).port, lines, slow, server };
}

/** Sends `n` Metadata requests on one connection and waits for every answer. */
async function ask(port: number, n: number): Promise<void> {
  const socket = new Socket();
  await new Promise<void>((resolve) => socket.connect(port, '127.0.0.1', resolve));
  const frames = new FrameReader(1 << 20);
  let answers = 0;
  await new Promise<void>((resolve) => {
    socket.on('data', (chunk: Buffer) => frames.push(chunk, () => { if (++answers === n) resolve(); }));
    const req = { topics: null, allowAutoTopicCreation: false, includeClusterAuthorizedOperations: false, includeTopicAuthorizedOperations: false };
    for (let i = 0; i < n; i++) for (const part of encodeRequestFrame(MetadataApi, 12, i, 'orders-app', req)) socket.write(part);
  });
  socket.destroy();
}

const servers: Server[] = [];
after(() => { for (const s of servers) s.close(); });

describe('request log', () => {
  it('at debug: one line per request with client id, API, version, size and latency', async () => {
    const l = await listener('debug', 0, 0);
    servers.push(l.server);
    await ask(l.port, 3);
    const requests = l.lines.filter((x) => x.msg === 'request');
    assert.equal(requests.length, 3);
    const r = requests[2]!;
    assert.equal(r['clientId'], 'orders-app');
    assert.equal(r['api'], 'Metadata');
    assert.equal(r['version'], 12);
    assert.equal(r['correlationId'], 2);
    assert.ok(typeof r['requestBytes'] === 'number' && r['requestBytes'] > 10, String(r['requestBytes']));
    assert.ok(typeof r['ms'] === 'number' && r['ms'] >= 0);
    assert.equal(l.slow.length, 0);
  });

  it('at info: no line per request', async () => {
    const l = await listener('info', 0, 0);
    servers.push(l.server);
    await ask(l.port, 20);
    assert.deepEqual(l.lines, []);
  });

  it('a request served slower than the threshold is counted, and logged at warn once per API per second', async () => {
    const l = await listener('info', SLOW_MS + 20, 0);
    servers.push(l.server);
    await ask(l.port, 3);
    assert.deepEqual(l.slow, ['Metadata', 'Metadata', 'Metadata']);
    const warned = l.lines.filter((x) => x.msg === 'slow request');
    assert.equal(warned.length, 1, JSON.stringify(l.lines));
    assert.equal(warned[0]!['clientId'], 'orders-app');
    assert.equal(warned[0]!['thresholdMs'], SLOW_MS);
    assert.ok((warned[0]!['servingMs'] as number) >= SLOW_MS);
  });

  it('time parked by design (a long-poll fetch waiting for data) is not serving time', async () => {
    const l = await listener('info', SLOW_MS + 20, SLOW_MS + 20);
    servers.push(l.server);
    await ask(l.port, 2);
    assert.deepEqual(l.slow, []);
    assert.deepEqual(l.lines, []);
  });
});
