// A handler bug must cost one connection, never the process: a response the request's version
// cannot encode closes that connection, and the next client is served as before.
import assert from 'node:assert/strict';
import { createServer, Socket } from 'node:net';
import { after, describe, it } from 'node:test';
import { MetadataApi, type MetadataResponse } from '../../../src/protocol/apis/metadata.js';
import { encodeRequestFrame, FrameReader } from '../../../src/protocol/framing.js';
import type { Wire } from '../../../src/protocol/schema.js';
import { serveWith } from '../../helpers/connection_fixture.js';

const sockets = new Set<Socket>();
const server = createServer((socket) => {
  sockets.add(socket);
  serveWith(socket, new Map([[MetadataApi.key, {
    api: MetadataApi,
    barrier: false,
    // A topic named null is valid from v12 only: v11 cannot encode this answer.
    handle: (): Wire<MetadataResponse> => ({ topics: [{ errorCode: 100, name: null, topicId: 'c'.repeat(32), partitions: [] }] }),
  }]]));
});

after(() => {
  for (const s of sockets) s.destroy();
  server.close();
});

/** Sends one Metadata request and resolves with the response frame, or with null if the server closes first. */
async function ask(port: number, version: number): Promise<Buffer | null> {
  const socket = new Socket();
  await new Promise<void>((resolve) => socket.connect(port, '127.0.0.1', resolve));
  const frames = new FrameReader(1 << 20);
  return new Promise((resolve) => {
    socket.on('data', (chunk: Buffer) => {
      frames.push(chunk, (frame) => {
        socket.destroy();
        resolve(frame);
      });
    });
    socket.on('close', () => resolve(null));
    const req = { topics: null, allowAutoTopicCreation: false, includeClusterAuthorizedOperations: false, includeTopicAuthorizedOperations: false };
    for (const part of encodeRequestFrame(MetadataApi, version, 7, 'test', req)) socket.write(part);
  });
}

describe('connection failures', () => {
  it('closes only the connection whose response cannot be encoded, and serves the next client', async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    assert.equal(await ask(port, 11), null, 'an unencodable v11 answer closes the connection');
    const answer = await ask(port, 12);
    assert.ok(answer !== null && answer.length > 8, 'the server still answers a v12 client');
  });
});
