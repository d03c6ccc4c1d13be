// A connection whose socket reads through readsFor (placed connections): small frames are copied
// out of the thread's staging buffer, a large frame is read straight into its own buffer once its
// size is known. However the bytes arrive (split anywhere, frames pipelined around a large one),
// every request reaches its handler whole and in order, every answer comes back in order, and
// large frames really are read in place; a frame is held whole against the held-bytes bound from
// its length on (given back when the client leaves mid-frame), and one the bound has no room for
// closes the connection before a buffer is made for it. A produce frame's buffer takes the next
// large frame once its handler returned and whatever it lent the frame to let go (a shard staging
// its batches by reference); no other request's does. A burst is read at most TURN_READ_BYTES per
// turn of the loop.
import assert from 'node:assert/strict';
import { createServer, Socket, type OnReadOpts, type SocketConstructorOpts } from 'node:net';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { STAGING_BYTES } from '../../../src/common/in_place_frames.js';
import { createLogger } from '../../../src/common/logger.js';
import { Connection, HeldBytes, readsFor, TURN_READ_BYTES } from '../../../src/net/connection.js';
import type { BoundHandler } from '../../../src/net/handler.js';
import { ProduceApi, type ProduceRequest, type ProduceResponse } from '../../../src/protocol/apis/produce.js';
import { encodeRequestFrame, FrameReader } from '../../../src/protocol/framing.js';
import type { Wire } from '../../../src/protocol/schema.js';

const PRODUCE_VERSION = 9;

interface Served {
  /** The peer: the test writes requests here and reads the answers. */
  peer: Socket;
  /** Each request's record bytes, as its handler saw them. */
  readonly seen: Buffer[];
  /** Each request's records as the handler got them: views of the frame, not copies. */
  readonly views: Buffer[];
  /** The length of every buffer a read was given. */
  readonly targets: number[];
  /** While set, a handler holds its request's frame (HandlerContext.requestFrame) and pushes the function letting go here. */
  holding: boolean;
  readonly holds: Array<() => void>;
  /** Whether each request's handler was lent its frame. */
  readonly lent: boolean[];
  /** Hears the size of every socket read, before the connection does. */
  onRead: (n: number) => void;
  close(): void;
}

/**
 * A connection serving one end of a loopback socket made with readsFor, buffering at most `held`'s
 * bound; not told it reads in place (`inPlace` false), it frames the reads as main's connections
 * frame their 'data' chunks.
 */
async function servedConnection(held = new HeldBytes(64 << 20), inPlace = true): Promise<Served> {
  const seen: Buffer[] = [];
  const views: Buffer[] = [];
  const targets: number[] = [];
  const holds: Array<() => void> = [];
  const lent: boolean[] = [];
  const handle: BoundHandler['handle'] = (ctx, req): Wire<ProduceResponse> => {
    const records = (req as ProduceRequest).topicData[0]!.partitionData[0]!.records!;
    seen.push(Buffer.from(records));
    views.push(records);
    lent.push(ctx.requestFrame != null);
    if (served.holding && ctx.requestFrame != null) holds.push(ctx.requestFrame.hold());
    return { responses: [], throttleTimeMs: 0 };
  };
  const handlers = new Map<number, BoundHandler>([
    [ProduceApi.key, { api: ProduceApi, barrier: false, handle }],
    // Another API whose body reads as a produce: a request that may keep views of its frame.
    [OTHER_API_KEY, { api: Object.create(ProduceApi, { key: { value: OTHER_API_KEY } }) as typeof ProduceApi, barrier: false, handle }],
  ]);
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
    callback: (n, buf) => {
      served.onRead(n);
      return (reads.callback as (n: number, buf: Uint8Array) => boolean)(n, buf);
    },
  };
  const options: SocketConstructorOpts & { onread: OnReadOpts } = { onread };
  const socket = new Socket(options);
  const served: Served = { peer: socket, seen, views, targets, holding: false, holds, lent, onRead: () => {}, close: () => { served.peer.destroy(); socket.destroy(); } };
  connection = new Connection(socket, services, limits, held, createLogger('silent'), () => {}, null, null, null, inPlace);
  socket.connect((listening.address() as { port: number }).port, '127.0.0.1');
  const peer = await accepted;
  listening.close();
  served.peer = peer;
  return served;
}

const OTHER_API_KEY = 77;

/** A Produce request's frame; with another `apiKey`, at a version whose request header is not flexible (the header's form follows the API key). */
function produceFrame(correlationId: number, records: Buffer, apiKey: number = ProduceApi.key): Buffer {
  const req = { transactionalId: null, acks: 1, timeoutMs: 1000, topicData: [{ name: 't', partitionData: [{ index: 0, records }] }] };
  const frame = Buffer.concat(encodeRequestFrame(ProduceApi, apiKey === ProduceApi.key ? PRODUCE_VERSION : 8, correlationId, 'test', req));
  frame.writeInt16BE(apiKey, 4);
  return frame;
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

/** Sends one request carrying `body` as correlation id `id`, in 64 KiB pieces, and waits for its answer. */
async function roundTrip(s: Served, id: number, body: Buffer, apiKey: number = ProduceApi.key): Promise<void> {
  assert.deepEqual(await sendInPieces(s, produceFrame(id, body, apiKey), [65_536], 1), [id]);
  s.peer.removeAllListeners('data');
}

const records = (size: number, seed: number): Buffer => Buffer.from(Array.from({ length: size }, (_, i) => (i * 31 + seed) & 0xff));

/** Four request bodies of one pooled size class (a power of two from 64 KiB). */
const SAME_CLASS_BODIES = [records(300_000, 1), records(310_000, 2), records(320_000, 3), records(330_000, 4)];

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

  it('lends a produce frame\'s buffer to the next large frame once its handler returned, and no other request\'s', { timeout: 30_000 }, async () => {
    const s = await servedConnection();
    try {
      const bodies = SAME_CLASS_BODIES;
      const keys = [ProduceApi.key, ProduceApi.key, OTHER_API_KEY, ProduceApi.key];
      for (let i = 0; i < bodies.length; i++) await roundTrip(s, i + 1, bodies[i]!, keys[i]);
      assert.deepEqual(s.seen, bodies, 'every handler saw its own bytes');
      const [first, second, other, fourth] = s.views.map((v) => v.buffer);
      assert.equal(second, first, 'the second produce was read into the first one\'s buffer');
      assert.equal(other, first, 'the next large frame after a produce takes its buffer, whatever its API');
      assert.notEqual(fourth, other, 'a frame of another API is not lent again: its handler may keep views of it');
      assert.deepEqual(s.views[2], bodies[2], 'the other request\'s view still reads its own bytes');
      assert.deepEqual(s.lent, [true, true, false, true], 'only produce handlers are lent their frame');
    } finally {
      s.close();
    }
  });

  it('keeps a produce frame\'s buffer from the next large frame while its handler\'s callees hold it, and lends it again once the last lets go', { timeout: 30_000 }, async () => {
    const s = await servedConnection();
    try {
      const bodies = SAME_CLASS_BODIES;
      const send = (i: number): Promise<void> => roundTrip(s, i + 1, bodies[i]!);
      s.holding = true;
      await send(0);
      await send(1);
      s.holding = false;
      const [first, second] = s.views.map((v) => v.buffer);
      assert.notEqual(second, first, 'a held frame\'s buffer was lent to the next frame');
      assert.deepEqual(s.views[0], bodies[0], 'the held frame still reads its own bytes');
      s.holds[0]!();
      await send(2);
      assert.equal(s.views[2]!.buffer, first, 'the next frame takes the buffer the last holder let go of');
      await send(3);
      assert.equal(s.views[3]!.buffer, first, 'and again: the second frame\'s buffer is still held');
      assert.deepEqual(s.views[1], bodies[1]);
      assert.deepEqual(s.lent, [true, true, true, true], 'every produce handler is lent its frame');
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

  for (const inPlace of [true, false]) {
    it(`${inPlace ? 'reading in place' : 'framing chunks as main does'}, stops reading a frame the held-bytes bound has no room for yet, and reads and serves it once bytes come back`, { timeout: 30_000 }, async () => {
      const held = new HeldBytes(400_000);
      const s = await servedConnection(held, inPlace);
      try {
        assert.deepEqual(await sendInPieces(s, produceFrame(1, records(1_000, 1)), [65_536], 1), [1]);
        s.peer.removeAllListeners('data');
        assert.ok(held.tryTake(300_000), 'other connections hold most of the bound');
        const closed = new Promise<string>((resolve) => s.peer.once('close', () => resolve('closed')));
        const body = records(200_000, 2);
        const answered = sendInPieces(s, Buffer.concat([produceFrame(2, body), produceFrame(3, records(50, 3))]), [65_536], 2);
        for (let i = 0; i < 400 && held.waiting === 0; i++) await new Promise((r) => setTimeout(r, 5));
        assert.equal(held.waiting, 1, 'the connection waits for room');
        await new Promise((r) => setTimeout(r, 50));
        assert.equal(s.seen.length, 1, 'nothing behind the waiting frame is served meanwhile');
        if (inPlace) assert.ok(s.targets.every((n) => n === STAGING_BYTES), 'no buffer is made for the waiting frame');
        assert.equal(held.used, 300_000, 'the waiting frame holds nothing');
        held.give(250_000);
        assert.deepEqual(await Promise.race([answered, closed]), [2, 3], 'served once there is room, on the same connection');
        assert.deepEqual(s.seen.slice(1), [body, records(50, 3)]);
        assert.equal(held.used, 50_000, 'everything the frames held is given back once they are dispatched');
        assert.equal(held.waiting, 0);
      } finally {
        s.close();
      }
    });
  }

  it('closes the connection on an announced frame larger than the whole held-bytes bound', { timeout: 30_000 }, async () => {
    const s = await servedConnection(new HeldBytes(400_000));
    try {
      const body = records(300_000, 5);
      const answered = await sendInPieces(s, produceFrame(1, body), [30_000], 1);
      assert.deepEqual(answered, [1]);
      assert.deepEqual(s.seen, [body]);
      // A 500 KB frame could never fit: refused on its length.
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

  it('stops reading a burst once TURN_READ_BYTES were read, until the loop\'s check phase, and serves all of it', { timeout: 30_000 }, async () => {
    const s = await servedConnection();
    try {
      const bodies = Array.from({ length: 32 }, (_, i) => records(200_000, i));
      const bytes = Buffer.concat(bodies.map((b, i) => produceFrame(i + 1, b)));
      // Bytes read in the current turn, and the most read in one turn before a read started.
      let inTurn = 0;
      let mostBeforeARead = 0;
      let ticking = true;
      const tick = (): void => {
        inTurn = 0;
        if (ticking) setImmediate(tick);
      };
      setImmediate(tick);
      s.onRead = (n) => {
        mostBeforeARead = Math.max(mostBeforeARead, inTurn);
        inTurn += n;
      };
      const answered = await sendInPieces(s, bytes, [bytes.length], bodies.length);
      ticking = false;
      assert.deepEqual(answered, bodies.map((_, i) => i + 1));
      assert.deepEqual(s.seen, bodies);
      assert.ok(mostBeforeARead < TURN_READ_BYTES, `a read started after ${mostBeforeARead} bytes were read in the same turn`);
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
