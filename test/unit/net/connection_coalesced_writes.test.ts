// Answers that complete together leave together: when a group commit answers several pipelined
// requests of one connection in one pass, the connection writes them with one socket write (one
// sendmsg, one wake-up of the client) rather than one each, still in request order.
import assert from 'node:assert/strict';
import { createServer, type Socket } from 'node:net';
import { after, describe, it } from 'node:test';
import { MetadataApi, type MetadataResponse } from '../../../src/protocol/apis/metadata.js';
import { encodeRequestFrame, FrameReader } from '../../../src/protocol/framing.js';
import { readResponseHeader } from '../../../src/protocol/header.js';
import { Reader } from '../../../src/protocol/reader.js';
import type { Wire } from '../../../src/protocol/schema.js';
import { connectTo, serveWith } from '../../helpers/connection_fixture.js';
import { until } from '../../helpers/until.js';

const VERSION = 12;
const REQUESTS = 3;

/** Answers each Metadata request only when the test says so; counts the server socket's writes. */
const parked: Array<() => void> = [];
let socketWrites = 0;
const sockets = new Set<Socket>();
const server = createServer((socket) => {
  sockets.add(socket);
  const cork = socket.cork.bind(socket);
  socket.cork = (): void => {
    socketWrites++;
    cork();
  };
  const answer: Wire<MetadataResponse> = { topics: [] };
  serveWith(socket, new Map([[MetadataApi.key, {
    api: MetadataApi,
    barrier: false,
    handle: (): Promise<Wire<MetadataResponse>> => new Promise((resolve) => parked.push(() => resolve(answer))),
  }]]));
});

after(() => {
  for (const s of sockets) s.destroy();
  server.close();
});

describe('connection response writes', () => {
  it('writes the answers completed in one pass with one socket write, in request order', async () => {
    const client = await connectTo(server);
    const correlationIds: number[] = [];
    const frames = new FrameReader(1 << 20);
    client.on('data', (chunk: Buffer) => frames.push(chunk, (frame) => {
      correlationIds.push(readResponseHeader(new Reader(frame), MetadataApi.key, MetadataApi.isFlexible(VERSION)));
    }));
    const req = { topics: null, allowAutoTopicCreation: false, includeClusterAuthorizedOperations: false, includeTopicAuthorizedOperations: false };
    for (let id = 1; id <= REQUESTS; id++) for (const part of encodeRequestFrame(MetadataApi, VERSION, id, 'test', req)) client.write(part);
    await until('every request reached the handler', 5_000, async () => parked.length, (n) => n === REQUESTS);

    socketWrites = 0;
    for (const answer of parked.splice(0)) answer();
    await until('every answer arrived', 5_000, async () => correlationIds.length, (n) => n === REQUESTS);
    assert.deepEqual(correlationIds, [1, 2, 3]);
    assert.equal(socketWrites, 1, 'the answers completed together went out in one write');
    client.destroy();
  });
});
