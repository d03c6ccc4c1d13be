// KIP-219 on the connection: a request its client quota throttles is answered at once with
// throttle_time_ms set, charged to (ANONYMOUS, the header's client id), and the connection then
// reads nothing more for that long: a request pipelined behind it is answered only after the mute.
import assert from 'node:assert/strict';
import { createServer, Socket } from 'node:net';
import { after, describe, it } from 'node:test';
import { createLogger } from '../../../src/common/logger.js';
import { Connection, HeldBytes } from '../../../src/net/connection.js';
import type { BoundHandler } from '../../../src/net/handler.js';
import type { QuotaCharge } from '../../../src/net/client_quota_gate.js';
import { MetadataApi, type MetadataResponse } from '../../../src/protocol/apis/metadata.js';
import { encodeRequestFrame, FrameReader } from '../../../src/protocol/framing.js';
import { readResponseHeader } from '../../../src/protocol/header.js';
import { Reader } from '../../../src/protocol/reader.js';
import type { Wire } from '../../../src/protocol/schema.js';

const THROTTLE_MS = 400;
const VERSION = 12;
const charged: Array<{ charge: QuotaCharge; user: string; clientId: string }> = [];

const sockets = new Set<Socket>();
const server = createServer((socket) => {
  sockets.add(socket);
  const handlers = new Map<number, BoundHandler>([[MetadataApi.key, {
    api: MetadataApi,
    barrier: false,
    handle: (): Wire<MetadataResponse> => ({ throttleTimeMs: 0, brokers: [], topics: [] }),
  }]]);
  const quotas = {
    active: true,
    chargeOf: (): QuotaCharge => 'request',
    // The first request goes over the quota; the next ones do not.
    charge: (charge: QuotaCharge, user: string, clientId: string): number => {
      charged.push({ charge, user, clientId });
      return charged.length === 1 ? THROTTLE_MS : 0;
    },
  };
  const services = {
    handlers, quotas,
    metrics: { protocolError: () => {}, recordRequest: () => {}, addSocketBytesIn: () => {}, addSocketBytesOut: () => {} },
    releaseLeases: () => {}, blockedShards: () => [],
  };
  const limits = { maxRequestBytes: 1 << 20, maxInflight: 8, idleTimeoutMs: 60_000, maxQueuedResponseBytes: 1 << 22 };
  new Connection(socket, services, limits, new HeldBytes(1 << 24), createLogger('silent'), () => {});
});

after(() => {
  for (const s of sockets) s.destroy();
  server.close();
});

describe('connection under a client quota', () => {
  it('answers throttle_time_ms at once and mutes the connection that long', async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    const socket = new Socket();
    await new Promise<void>((resolve) => socket.connect(port, '127.0.0.1', resolve));
    const frames = new FrameReader(1 << 20);
    const answers: Array<{ at: number; correlationId: number; throttleTimeMs: number }> = [];
    const sent = performance.now();
    const done = new Promise<void>((resolve) => {
      socket.on('data', (chunk: Buffer) => frames.push(chunk, (frame) => {
        const r = new Reader(frame);
        const correlationId = readResponseHeader(r, MetadataApi.key, true);
        answers.push({ at: performance.now() - sent, correlationId, throttleTimeMs: MetadataApi.decodeResponse(VERSION, r).throttleTimeMs });
        if (answers.length === 2) resolve();
      }));
    });
    const req = { topics: [], allowAutoTopicCreation: false, includeClusterAuthorizedOperations: false, includeTopicAuthorizedOperations: false };
    // Both requests in one write: the second is already buffered when the first is answered.
    socket.write(Buffer.concat([...encodeRequestFrame(MetadataApi, VERSION, 1, 'greedy', req), ...encodeRequestFrame(MetadataApi, VERSION, 2, 'greedy', req)]));
    await done;
    socket.destroy();
    assert.deepEqual(answers.map((a) => [a.correlationId, a.throttleTimeMs]), [[1, THROTTLE_MS], [2, 0]]);
    // Lower bounds only: a loaded host can make the second answer later, never earlier.
    assert.ok(answers[1]!.at - answers[0]!.at >= THROTTLE_MS * 0.9, `second answer ${answers[1]!.at - answers[0]!.at} ms after the first`);
    assert.deepEqual(charged[0], { charge: 'request', user: 'ANONYMOUS', clientId: 'greedy' });
  });
});
