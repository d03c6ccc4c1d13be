// A connection whose socket reads through readsFor (placed connections): small frames are copied
// out of the thread's staging buffer, a large frame is read straight into its own buffer once its
// size is known. However the bytes arrive (split anywhere, frames pipelined around a large one),
// every request reaches its handler whole and in order, every answer comes back in order, and
// large frames really are read in place; a frame read in place is held whole against the
// held-bytes bound (given back when the client leaves mid-frame), and one the bound has no room
// for is read in chunks as on main.
import assert from 'node:assert/strict';
import { createServer, Socket, type OnReadOpts, type SocketConstructorOpts } from 'node:net';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { createLogger } from '../../../src/common/logger.js';
import { Connection, HeldBytes, readsFor } from '../../../src/net/connection.js';
import type { BoundHandler } from '../../../src/net/handler.js';
import { ProduceApi, type ProduceRequest, type ProduceResponse } from '../../../src/protocol/apis/produce.js';
import { encodeRequestFrame, FrameReader } from '../../../src/protocol/framing.js';
import type { Wire } from '../../../src/protocol/schema.js';

const PRODUCE_VERSION = 9;
/** The staging buffer's size in connection.ts: a read target of another size is a large frame's own buffer. */
const STAGING_BYTES = 64 * 1024;

interface Served {
  /** The peer: the test writes requests here and reads the answers. */
  readonly peer: Socket;
  /** Each request's record bytes, as its handler saw them. */
  readonly seen: Buffer[];
  /** The length of every buffer a read was given. */
  readonly targets: number[];
  close(): void;
}

/** A connection serving one end of a loopback socket made with readsFor, buffering at most `held`'s bound. */
async function servedConnection(held = new HeldBytes(64 << 20)): Promise<Served> {
  const seen: Buffer[] = [];
  const targets: number[] = [];
  const handlers = new Map<number, BoundHandler>([[ProduceApi.key, {
    api: ProduceApi,
    barrier: false,
    handle: (_ctx, req): Wire<ProduceResponse> => {
      seen.push(Buffer.from((req as ProduceRequest).topicData[0]!.partitionData[0]!.records!));
      return { responses: [], throttleTimeMs: 0 };
    },
  }]]);
  const services = { handlers, metrics: { protocolError: () => {}, recordRequest: () => {}, addSocketBytesIn: () => {}, addSocketBytesOut: () => {} }, releaseLeases: () => {}, blockedShards: () => [] };
  const limits = { maxRequestBytes: 4 << 20, maxInflight: 64, idleTimeoutMs: 60_000, maxQueuedResponseBytes: 1 << 22 };
  const listening = createServer();
  const accepted = new Promise<Socket>((resolve) => listening.once('connection', resolve));
  await new Promise<void>((resolve) => listening.listen(0, '127.0.0.1', resolve));
  let connection: Connection | null = null;
  const reads = readsFor(() => connection);
  const onread: OnReadOpts = {
    buffer: () => {
      const b = (reads.buffer as () => Uint8Array)();
      targets.push(b.length);
      return b;
    },
    callback: reads.callback,
  };
  const options: SocketConstructorOpts & { onread: OnReadOpts } = { onread };
  const socket = new Socket(options);
  connection = new Connection(socket, services, limits, held, createLogger('silent'), () => {}, null, null, null, true);
  socket.connect((listening.address() as { port: number }).port, '127.0.0.1');
  const peer = await accepted;
  listening.close();
  return { peer, seen, targets, close: () => { peer.destroy(); socket.destroy(); } };
}

function produceFrame(correlationId: number, records: Buffer): Buffer {
  const req = { transactionalId: null, acks: 1, timeoutMs: 1000, topicData: [{ name: 't', partitionData: [{ index: 0, records }] }] };
  return Buffer.concat(encodeRequestFrame(ProduceApi, PRODUCE_VERSION, correlationId, 'test', req));
}

/** Writes `bytes` in pieces of the given sizes (cycled), each in its own turn so reads see them apart; resolves with the correlation ids answered, once `expected` came back. */
async function sendInPieces(s: Served, bytes: Buffer, pieces: readonly number[], expected: number): Promise<number[]> {
  const answered: number[] = [];
  const frames = new FrameReader(1 << 20);
  const done = new Promise<void>((resolve) => {
    s.peer.on('data', (chunk: Buffer) => frames.push(chunk, (frame) => {
      answered.push(frame.readInt32BE(0));
      if (answered.length === expected) resolve();
    }));
  });
  for (let at = 0, i = 0; at < bytes.length; i++) {
    const n = Math.min(pieces[i % pieces.length]!, bytes.length - at);
    s.peer.write(bytes.subarray(at, at + n));
    at += n;
    await new Promise((r) => setImmediate(r));
  }
  await done;
  return answered;
}

const records = (size: number, seed: number): Buffer => Buffer.from(Array.from({ length: size }, (_, i) => (i * 31 + seed) & 0xff));

describe('connection reads in place', () => {
  it('reads a large frame straight into its own buffer, with small frames pipelined around it', { timeout: 30_000 }, async () => {
    const s = await servedConnection();
    try {
      const bodies = [records(100, 1), records(300_000, 2), records(2_000, 3), records(200_000, 4)];
      const bytes = Buffer.concat(bodies.map((b, i) => produceFrame(i + 1, b)));
      const answered = await sendInPieces(s, bytes, [40_000, 1, 90_000, 7, 65_536], bodies.length);
      assert.deepEqual(answered, [1, 2, 3, 4]);
      assert.deepEqual(s.seen, bodies);
      assert.ok(s.targets.some((n) => n !== STAGING_BYTES && n > 0), `some read went into a large frame's own buffer (targets ${s.targets.join(',')})`);
    } finally {
      s.close();
    }
  });

  it('holds a frame read in place whole against the held-bytes bound, and gives it all back when the client leaves mid-frame', { timeout: 30_000 }, async () => {
    const held = new HeldBytes(64 << 20);
    const s = await servedConnection(held);
    try {
      const frame = produceFrame(1, records(500_000, 9));
      s.peer.write(frame.subarray(0, 100_000));
      while (!s.targets.some((n) => n > STAGING_BYTES)) await new Promise((r) => setTimeout(r, 5));
      assert.ok(held.used >= frame.length, `the whole frame is held once its buffer exists (${held.used} of ${frame.length})`);
      s.peer.destroy();
      for (let i = 0; i < 200 && held.used > 0; i++) await new Promise((r) => setTimeout(r, 5));
      assert.equal(held.used, 0, 'everything held is given back');
    } finally {
      s.close();
    }
  });

  it('reads an announced frame in chunks where the held-bytes bound has no room for all of it', { timeout: 30_000 }, async () => {
    const s = await servedConnection(new HeldBytes(400_000));
    try {
      const body = records(300_000, 5);
      const answered = await sendInPieces(s, produceFrame(1, body), [30_000], 1);
      assert.deepEqual(answered, [1]);
      assert.deepEqual(s.seen, [body]);
      // A 500 KB frame does not fit: it is read in chunks until the bound closes the connection, as on main.
      const readsBefore = s.targets.length;
      const closed = new Promise<void>((resolve) => s.peer.once('close', () => resolve()));
      // The broker closes with the frame's rest unread, so the peer may see a reset.
      s.peer.on('error', () => undefined);
      s.peer.write(produceFrame(2, records(500_000, 6)));
      await closed;
      assert.deepEqual(new Set(s.targets.slice(readsBefore)), new Set([STAGING_BYTES]), 'no buffer was made for the frame that does not fit');
    } finally {
      s.close();
    }
  });

  it('delivers every request whole and in order however the bytes are split (property)', { timeout: 120_000 }, async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 0, max: 200_000 }), { minLength: 1, maxLength: 5 }),
        fc.array(fc.integer({ min: 1, max: 100_000 }), { minLength: 1, maxLength: 6 }),
        async (sizes, pieces) => {
          const s = await servedConnection();
          try {
            const bodies = sizes.map((n, i) => records(n, i));
            const answered = await sendInPieces(s, Buffer.concat(bodies.map((b, i) => produceFrame(i + 1, b))), pieces, bodies.length);
            assert.deepEqual(answered, bodies.map((_, i) => i + 1));
            assert.deepEqual(s.seen, bodies);
          } finally {
            s.close();
          }
        },
      ),
      { numRuns: 25 },
    );
  });
});
