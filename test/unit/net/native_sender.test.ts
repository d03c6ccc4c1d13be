// The addon's socket sender over real loopback sockets: ordering of bytes and file ranges, large
// ranges to a slow reader without blocking the event loop, peer failures, detach freeing every
// fd, and no bytes reaching a socket that reuses a detached connection's fd number. Then inline
// sends (trySend, NativeSink): never ahead of queued bytes, file ranges only from the page cache,
// split on a full socket with the rest
// queued in order, a reset reported once, and inline bytes counted as sent by a Connection.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { closeSync, fsyncSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { createLogger } from '../../../src/common/logger.js';
import { Connection, HeldBytes } from '../../../src/net/connection.js';
import type { BoundHandler } from '../../../src/net/handler.js';
import { nativeSender, type NativeSender, type SenderListener } from '../../../src/net/native_sender.js';
import { INLINE_MAX_BYTES, NativeSink } from '../../../src/net/response_sink.js';
import { MetadataApi } from '../../../src/protocol/apis/metadata.js';
import { encodeRequestFrame, FrameReader } from '../../../src/protocol/framing.js';
import type { MessageChunk } from '../../../src/protocol/writer.js';

const FILE_BYTES = 1 << 20;
const BIG_BYTES = 64 << 20;

interface Pair {
  server: Socket;
  client: Socket;
}

function socketFd(s: Socket): number {
  const fd = (s as unknown as { _handle?: { fd?: unknown } })._handle?.fd;
  assert.equal(typeof fd, 'number');
  return fd as number;
}

function openFds(): number {
  return readdirSync('/proc/self/fd').length;
}

function waitFor(what: string, cond: () => boolean, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  return new Promise((resolve, reject) => {
    const tick = (): void => {
      if (cond()) return resolve();
      if (Date.now() > deadline) return reject(new Error(`timed out waiting for ${what}`));
      setTimeout(tick, 5);
    };
    tick();
  });
}

/** Records what the sender reports for one connection. */
class Recorder implements SenderListener {
  drainedBytes = 0;
  failure: string | null = null;
  isDetached = false;
  drained(bytes: number): void {
    this.drainedBytes += bytes;
  }
  failed(code: string): void {
    this.failure ??= code;
  }
  detached(): void {
    this.isDetached = true;
  }
}

/** `length` bytes that differ with `seed`, so a misplaced run shows. */
function patterned(length: number, seed: number): Buffer {
  const b = Buffer.allocUnsafe(length);
  for (let i = 0; i < length; i++) b[i] = (seed * 131 + i * 7 + (i >> 9)) & 0xff;
  return b;
}

/** The bytes a chunk stands for. */
function bytesOf(c: MessageChunk, file: Buffer): Buffer {
  return Buffer.isBuffer(c) ? c : file.subarray(c.position, c.position + c.length);
}

/** Collects what the client reads until `expected` bytes arrived. */
function collect(client: Socket, expected: number): Promise<Buffer> {
  const parts: Buffer[] = [];
  let got = 0;
  return new Promise((resolve, reject) => {
    client.on('data', (b: Buffer) => {
      parts.push(b);
      got += b.length;
      if (got >= expected) resolve(Buffer.concat(parts));
    });
    client.once('error', reject);
  });
}

describe('native socket sender', () => {
  let sender: NativeSender;
  let dir: string;
  let fileFd: number;
  let fileBytes: Buffer;
  let filePath: string;
  let server: Server;

  async function pair(): Promise<Pair> {
    const waiting = new Promise<Socket>((resolve) => server.once('connection', resolve));
    const addr = server.address();
    const port = typeof addr === 'object' && addr !== null ? addr.port : 0;
    const client = connect(port, '127.0.0.1');
    const serverSide = await waiting;
    // Tests abort peers on purpose; a reset reaching either socket after its test has asserted
    // what it checks must not surface as an uncaught error in a later one.
    serverSide.on('error', () => undefined);
    client.on('error', () => undefined);
    await new Promise<void>((resolve) => (client.readyState === 'open' ? resolve() : client.once('connect', () => resolve())));
    return { server: serverSide, client };
  }

  before(async () => {
    const s = nativeSender();
    if (typeof s === 'string') throw new Error(`native sender unavailable: ${s}`);
    sender = s;
    dir = mkdtempSync(join(tmpdir(), 'sluice-sender-'));
    fileBytes = Buffer.alloc(FILE_BYTES);
    for (let i = 0; i < FILE_BYTES; i++) fileBytes[i] = (i * 131 + (i >> 11)) & 0xff;
    filePath = join(dir, 'segment.log');
    const wfd = openSync(filePath, 'w');
    writeSync(wfd, fileBytes);
    fsyncSync(wfd); // clean pages, so a test can drop them from the page cache
    closeSync(wfd);
    fileFd = openSync(filePath, 'r');
    server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  });

  after(async () => {
    closeSync(fileFd);
    await new Promise<void>((resolve) => server.close(() => resolve()));
    rmSync(dir, { recursive: true, force: true });
  });

  /** Attaches the pair's server side; returns its id and recorder. */
  function attach(p: Pair): { id: number; rec: Recorder } {
    const rec = new Recorder();
    return { id: sender.attach(socketFd(p.server), rec), rec };
  }

  async function closePair(p: Pair, id: number, rec: Recorder): Promise<void> {
    sender.detach(id);
    await waitFor('detached', () => rec.isDetached);
    p.server.destroy();
    p.client.destroy();
  }

  it('delivers interleaved buffers and file ranges byte-identical, in order', async () => {
    const item = fc.oneof(
      fc.uint8Array({ minLength: 0, maxLength: 3000 }).map((a) => Buffer.from(a) as MessageChunk),
      fc.tuple(fc.nat(FILE_BYTES - 1), fc.nat(200_000)).map(([pos, len]): MessageChunk => ({ fd: fileFd, position: pos, length: Math.min(len, FILE_BYTES - pos) })),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(fc.array(item, { maxLength: 12 }), { minLength: 1, maxLength: 6 }), async (batches) => {
        const expected = Buffer.concat(batches.flat().map((c) => (Buffer.isBuffer(c) ? c : fileBytes.subarray(c.position, c.position + c.length))));
        const p = await pair();
        const { id, rec } = attach(p);
        const received = expected.length > 0 ? collect(p.client, expected.length) : Promise.resolve(Buffer.alloc(0));
        for (const batch of batches) sender.enqueue(id, batch);
        const got = await received;
        assert.equal(got.length, expected.length);
        assert.ok(got.equals(expected), 'bytes differ');
        await waitFor('all drained', () => rec.drainedBytes === expected.length);
        assert.equal(rec.failure, null);
        await closePair(p, id, rec);
      }),
      { numRuns: 25 },
    );
  });

  it('sends a 64 MiB range to a paused reader while the event loop keeps running', async () => {
    const path = join(dir, 'big.log');
    const wfd = openSync(path, 'w');
    for (let off = 0; off < BIG_BYTES; off += FILE_BYTES) writeSync(wfd, fileBytes, 0, FILE_BYTES, off);
    closeSync(wfd);
    const bigFd = openSync(path, 'r');
    const p = await pair();
    const { id, rec } = attach(p);
    p.client.pause();
    let ticks = 0;
    const timer = setInterval(() => ticks++, 10);
    const started = Date.now();
    sender.enqueue(id, [Buffer.from('head'), { fd: bigFd, position: 0, length: BIG_BYTES }, Buffer.from('tail')]);
    closeSync(bigFd); // the sender holds its own dup
    await new Promise((resolve) => setTimeout(resolve, 300));
    const ticksWhilePaused = ticks;
    let got = 0;
    let mismatch = -1;
    let first: Buffer | null = null;
    let last = Buffer.alloc(0);
    await new Promise<void>((resolve) => {
      p.client.on('data', (b: Buffer) => {
        if (first === null) first = b.subarray(0, 4);
        // Check the file part against the 1 MiB pattern it repeats.
        for (let i = 0; i < b.length && mismatch < 0; i += 4093) {
          const at = got + i - 4;
          if (at >= 0 && at < BIG_BYTES && b[i] !== fileBytes[at % FILE_BYTES]) mismatch = at;
        }
        got += b.length;
        last = Buffer.concat([last, b]).subarray(-4);
        if (got >= BIG_BYTES + 8) resolve();
      });
      p.client.resume();
    });
    clearInterval(timer);
    assert.equal(got, BIG_BYTES + 8);
    assert.equal(String(first), 'head');
    assert.equal(last.toString(), 'tail');
    assert.equal(mismatch, -1, `byte at ${mismatch} differs`);
    assert.ok(ticksWhilePaused >= 10, `timer fired only ${ticksWhilePaused} times in 300 ms while the peer was paused`);
    assert.ok(ticks >= ticksWhilePaused, 'timer kept firing');
    await waitFor('drained', () => rec.drainedBytes === BIG_BYTES + 8);
    assert.ok(Date.now() - started >= 300);
    await closePair(p, id, rec);
  });

  it('reports a peer that closes mid-send, and later connections still work', async () => {
    const p = await pair();
    const { id, rec } = attach(p);
    for (let i = 0; i < 16; i++) sender.enqueue(id, [{ fd: fileFd, position: 0, length: FILE_BYTES }]);
    p.client.destroy(); // unread data in its receive buffer makes the kernel answer with RST
    await waitFor('failure', () => rec.failure !== null);
    assert.match(rec.failure!, /^E(PIPE|CONNRESET)$/);
    assert.throws(() => sender.enqueue(id, [Buffer.from('x')]), /failed/);
    await closePair(p, id, rec);

    const q = await pair();
    const next = attach(q);
    const got = collect(q.client, 5);
    sender.enqueue(next.id, [Buffer.from('hello')]);
    assert.equal((await got).toString(), 'hello');
    await closePair(q, next.id, next.rec);
  });

  it('detach with queued data closes every dup it held', async () => {
    const p = await pair();
    p.client.pause();
    const baseline = openFds();
    const { id, rec } = attach(p);
    const ranges: MessageChunk[] = Array.from({ length: 200 }, () => ({ fd: fileFd, position: 0, length: FILE_BYTES }));
    sender.enqueue(id, ranges);
    await waitFor('send to stall', () => rec.drainedBytes > 0);
    assert.ok(openFds() > baseline + 100, 'ranges hold their own fds while queued');
    sender.detach(id);
    await waitFor('detached', () => rec.isDetached);
    assert.ok(rec.drainedBytes < 200 * FILE_BYTES, 'the queue was still full at detach');
    assert.equal(openFds(), baseline);
    p.server.destroy();
    p.client.destroy();
  });

  it('sends nothing from a detached queue to a socket that reuses its fd number', async () => {
    const p = await pair();
    p.client.pause();
    const { id, rec } = attach(p);
    const oldFd = socketFd(p.server);
    sender.enqueue(id, Array.from({ length: 64 }, () => ({ fd: fileFd, position: 0, length: FILE_BYTES })));
    sender.detach(id);
    await waitFor('detached', () => rec.isDetached);
    p.server.destroy();
    p.client.destroy();
    await new Promise((resolve) => setTimeout(resolve, 20));

    const q = await pair();
    const reused = socketFd(q.server) === oldFd || socketFd(q.client) === oldFd;
    // Whichever end took the old number, a stray write would show up at the other end.
    let received = 0;
    q.client.on('data', (b: Buffer) => (received += b.length));
    q.server.on('data', (b: Buffer) => (received += b.length));
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(received, 0);
    assert.ok(reused, `fd ${oldFd} was not reused (got ${socketFd(q.server)}/${socketFd(q.client)}), the check proves less`);
    q.server.destroy();
    q.client.destroy();
  });

  it('never misses a wake-up: many small sends each answered before the next', async () => {
    const p = await pair();
    const { id, rec } = attach(p);
    let got = 0;
    p.client.on('data', (b: Buffer) => (got += b.length));
    for (let i = 1; i <= 400; i++) {
      sender.enqueue(id, [Buffer.from([i & 0xff])]);
      await waitFor(`send ${i}`, () => rec.drainedBytes === i, 2_000);
    }
    await waitFor('all bytes', () => got === 400);
    await closePair(p, id, rec);
  });

  it('refuses enqueues past the per-connection item limit', async () => {
    const p = await pair();
    const { id, rec } = attach(p);
    p.client.pause();
    const many: MessageChunk[] = Array.from({ length: 16_385 }, () => Buffer.from('x'));
    assert.throws(() => sender.enqueue(id, many), /queue full/);
    await closePair(p, id, rec);
  });
  it('trySend writes nothing while the sender thread holds earlier items of the connection', async () => {
    const p = await pair();
    const { id, rec } = attach(p);
    p.client.pause();
    const ranges: MessageChunk[] = Array.from({ length: 16 }, () => ({ fd: fileFd, position: 0, length: FILE_BYTES }));
    const first = Buffer.from('first');
    const late = Buffer.from('late');
    assert.equal(sender.trySend(id, [first]), first.length, 'an idle connection is written at once');
    sender.enqueue(id, ranges);
    assert.equal(sender.trySend(id, [late]), 0, 'bytes behind queued ranges wait for them');
    sender.enqueue(id, [late]);
    const expected = Buffer.concat([first, ...ranges.map((c) => bytesOf(c, fileBytes)), late]);
    const received = collect(p.client, expected.length);
    p.client.resume();
    assert.ok((await received).equals(expected), 'bytes differ');
    // Only what the sender thread wrote is reported: inline bytes were counted by the caller.
    await waitFor('drained', () => rec.drainedBytes === 16 * FILE_BYTES + late.length);
    const again = collect(p.client, 5);
    assert.equal(sender.trySend(id, [Buffer.from('again')]), 5, 'once everything was reported, inline again');
    assert.equal((await again).toString(), 'again');
    assert.equal(rec.failure, null);
    await closePair(p, id, rec);
  });

  /** A NativeSink on the pair's server side, counting what it tells its connection. */
  function sinkOf(p: Pair): { sink: NativeSink; events: { drains: number; errors: number } } {
    const events = { drains: 0, errors: 0 };
    const sink = NativeSink.open(p.server, sender, { onDrain: () => events.drains++, onError: () => events.errors++ }, 60_000);
    assert.ok(sink !== null, 'the server socket has a usable fd');
    return { sink, events };
  }

  /** Closes the sink at once and waits for the sender to let go of its dup (Node may have destroyed the socket first, after a reset). */
  async function closeSink(p: Pair, sink: NativeSink): Promise<void> {
    const attached = sender.attached;
    sink.close(false);
    await waitFor('detached', () => sender.attached < attached && p.server.destroyed);
    p.client.destroy();
  }

  it('sends small buffer-only writes inline, never ahead of queued file ranges', async () => {
    const p = await pair();
    const { sink, events } = sinkOf(p);
    const received: Buffer[] = [];
    p.client.on('data', (b: Buffer) => received.push(b));
    const sent: Buffer[] = [];
    const write = (chunks: MessageChunk[]): void => {
      for (const c of chunks) sent.push(bytesOf(c, fileBytes));
      sink.write(chunks);
    };
    const small = (seed: number): Buffer[] => [patterned(40, seed), patterned(700, seed + 1), patterned(3, seed + 2)];
    write(small(1));
    assert.equal(sink.queuedBytes, 0, 'an idle sink sends a small answer inline');
    // A fetch-like answer the socket has room for, too large to go inline: only the sender thread
    // may send it, and its report cannot arrive before this synchronous code ends, so what
    // follows must queue behind it although the socket would take it now.
    write([patterned(64, 9), ...[0, 1, 2].map((i): MessageChunk => ({ fd: fileFd, position: i * 300_001, length: 100_000 + i }))]);
    const queued = sink.queuedBytes;
    assert.ok(queued > INLINE_MAX_BYTES);
    assert.equal(queued, 64 + 300_003, 'a large answer goes to the sender thread');
    write(small(20));
    write(small(30));
    assert.equal(sink.queuedBytes, queued + 2 * 743, 'small answers behind queued ranges are queued too');
    await waitFor('queue drained', () => sink.queuedBytes === 0);
    write(small(40));
    assert.equal(sink.queuedBytes, 0, 'inline again once everything queued was sent');
    const expected = Buffer.concat(sent);
    await waitFor('all bytes', () => received.reduce((n, b) => n + b.length, 0) >= expected.length);
    assert.ok(Buffer.concat(received).equals(expected), 'bytes differ');
    assert.equal(events.errors, 0);
    await closeSink(p, sink);
  });

  /** A small fetch-like answer: header bytes and two ranges of the file. */
  const answer = (seed: number): MessageChunk[] => [patterned(50, seed), { fd: fileFd, position: 1_000 * seed, length: 8_000 }, patterned(9, seed + 1), { fd: fileFd, position: 3_333 * seed, length: 20_000 }];

  /** Writes through `sink` and resolves once the client read every byte written, checking them. */
  function recording(p: Pair, sink: NativeSink): { write(chunks: MessageChunk[]): void; check(): Promise<void> } {
    const received: Buffer[] = [];
    p.client.on('data', (b: Buffer) => received.push(b));
    const sent: Buffer[] = [];
    return {
      write(chunks) {
        for (const c of chunks) sent.push(bytesOf(c, fileBytes));
        sink.write(chunks);
      },
      async check() {
        const expected = Buffer.concat(sent);
        await waitFor('all bytes', () => received.reduce((n, b) => n + b.length, 0) >= expected.length);
        assert.ok(Buffer.concat(received).equals(expected), 'bytes differ');
      },
    };
  }

  it('sends answers with cached file ranges inline, up to INLINE_MAX_BYTES, each with its own bytes', async () => {
    const p = await pair();
    const { sink, events } = sinkOf(p);
    try {
      const out = recording(p, sink);
      readFileSync(filePath); // the file's pages are cached now
      out.write(answer(1));
      assert.equal(sink.queuedBytes, 0, 'cached ranges of a small answer leave inline');
      out.write(answer(3));
      assert.equal(sink.queuedBytes, 0);
      // A tailing consumer's answer at 100k msgs/s (~64 KiB and more): inline, not the sender
      // thread's. The smaller answers after it reuse the addon's read buffer, whose bytes past
      // their own ranges are still the larger answer's.
      const half = (INLINE_MAX_BYTES >> 1) - 100;
      const large: MessageChunk[] = [patterned(60, 7), { fd: fileFd, position: 5, length: half }, patterned(11, 8), { fd: fileFd, position: 400_003, length: half }];
      const total = large.reduce((n, c) => n + c.length, 0);
      assert.ok(total > 64 * 1024 && total <= INLINE_MAX_BYTES);
      out.write(large);
      // The socket takes what it has room for now; only the rest goes to the sender thread.
      assert.ok(sink.queuedBytes < total, `an answer under the bound is sent inline (${sink.queuedBytes} of ${total} queued)`);
      await waitFor('queue drained', () => sink.queuedBytes === 0);
      out.write(answer(2));
      out.write(answer(5));
      assert.equal(sink.queuedBytes, 0);
      await out.check();
      assert.equal(events.errors, 0);
    } finally {
      await closeSink(p, sink);
    }
  });

  // dd's nocache asks the kernel to drop a file's clean cached pages; a tmpfs has no other copy.
  // The file is one of its own: pages another test sent with sendfile may still be held by
  // socket buffers, and held pages stay cached.
  const tmpfs = spawnSync('stat', ['-f', '-c', '%T', tmpdir()], { encoding: 'utf8' }).stdout.trim() === 'tmpfs';
  it('queues an answer whose file ranges are not in the page cache, and what follows it', { skip: tmpfs && 'the temporary directory is a tmpfs: its pages cannot leave the cache' }, async () => {
    const coldPath = join(dir, 'cold.log');
    const cold = patterned(64 * 1024, 11);
    const wfd = openSync(coldPath, 'w');
    writeSync(wfd, cold);
    fsyncSync(wfd);
    closeSync(wfd);
    const dropped = spawnSync('dd', ['if=/dev/null', `of=${coldPath}`, 'oflag=nocache', 'conv=notrunc,fdatasync', 'count=0'], { stdio: 'ignore' });
    assert.equal(dropped.status, 0, 'dd dropped the file from the page cache');
    const coldFd = openSync(coldPath, 'r');
    const p = await pair();
    const { sink, events } = sinkOf(p);
    try {
      const received = collect(p.client, 50 + 20_000 + 30);
      sink.write([patterned(50, 2), { fd: coldFd, position: 4_096, length: 20_000 }]);
      assert.equal(sink.queuedBytes, 20_050, 'uncached ranges go to the sender thread, which may wait for the disk');
      sink.write([patterned(30, 5)]);
      assert.equal(sink.queuedBytes, 20_080, 'and what follows queues behind them');
      const expected = Buffer.concat([patterned(50, 2), cold.subarray(4_096, 24_096), patterned(30, 5)]);
      assert.ok((await received).equals(expected), 'bytes differ');
      await waitFor('queue drained', () => sink.queuedBytes === 0);
      assert.equal(events.errors, 0);
    } finally {
      await closeSink(p, sink);
      closeSync(coldFd);
    }
  });

  it('queues what a full socket did not take of an inline write, in order behind it', async () => {
    const p = await pair();
    const { sink, events } = sinkOf(p);
    p.client.pause();
    const sent: Buffer[] = [];
    const size = 20_000 + 17 + 30_000;
    let split = -1;
    // Bounded: the loopback socket buffers hold a few MiB at most.
    for (let i = 0; i < 2_000 && split < 0; i++) {
      const chunks = [patterned(20_000, 3 * i), patterned(17, 3 * i + 1), patterned(30_000, 3 * i + 2)];
      sent.push(...chunks);
      sink.write(chunks);
      if (sink.queuedBytes > 0) split = sink.queuedBytes;
    }
    assert.ok(split > 0 && split < size, `the first write the socket did not take whole was split (${split} of ${size} bytes queued)`);
    const tail = patterned(100, 7);
    sent.push(tail);
    sink.write([tail]);
    assert.equal(sink.queuedBytes, split + tail.length, 'later writes queue behind the rest');
    const expected = Buffer.concat(sent);
    const received = collect(p.client, expected.length);
    p.client.resume();
    assert.ok((await received).equals(expected), 'bytes differ');
    await waitFor('queue drained', () => sink.queuedBytes === 0);
    assert.equal(events.errors, 0);
    await closeSink(p, sink);
  });

  it('reports a reset found by an inline send once', async () => {
    const p = await pair();
    const { sink, events } = sinkOf(p);
    p.client.pause();
    sink.write([Buffer.from('unread')]);
    assert.equal(sink.queuedBytes, 0);
    p.client.destroy(); // unread bytes in its receive buffer: the kernel answers with RST
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(sink.write([Buffer.from('a')]), false);
    assert.equal(sink.write([Buffer.from('b')]), false);
    assert.equal(sink.queuedBytes, 0, 'the reset was met inline: nothing went to the sender thread');
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(events.errors, 1);
    await closeSink(p, sink);
  });

  it('a connection counts inline-sent answers as sent: bytes-out metric and its queued-bytes bound', async () => {
    const p = await pair();
    let bytesOut = 0;
    const handlers = new Map<number, BoundHandler>([[MetadataApi.key, { api: MetadataApi, barrier: false, handle: () => ({ topics: [] }) }]]);
    const services = {
      handlers,
      metrics: { protocolError: () => {}, recordRequest: () => {}, addSocketBytesIn: () => {}, addSocketBytesOut: (n: number) => (bytesOut += n) },
      releaseLeases: () => {},
      blockedShards: () => [],
    };
    // Room for a few dozen answers: bytes wrongly left counted as queued would stop dispatch.
    const limits = { maxRequestBytes: 1 << 20, maxInflight: 8, idleTimeoutMs: 60_000, maxQueuedResponseBytes: 2_048 };
    const conn = new Connection(p.server, services, limits, new HeldBytes(1 << 24), createLogger('silent'), () => {}, sender);
    const requests = 300;
    const frames = new FrameReader(1 << 20);
    const ids: number[] = [];
    let bytesIn = 0;
    p.client.on('data', (b: Buffer) => {
      bytesIn += b.length;
      frames.push(b, (f) => ids.push(f.readInt32BE(0)));
    });
    const req = { topics: [], allowAutoTopicCreation: false, includeClusterAuthorizedOperations: false, includeTopicAuthorizedOperations: false };
    p.client.write(Buffer.concat(Array.from({ length: requests }, (_, i) => Buffer.concat(encodeRequestFrame(MetadataApi, 12, i, 'test', req)))));
    await waitFor(`${requests} answers`, () => ids.length === requests, 5_000);
    assert.deepEqual(ids, Array.from({ length: requests }, (_, i) => i));
    assert.equal(bytesOut, bytesIn, 'the bytes-out metric counts every byte sent');
    const closed = new Promise((resolve) => p.server.once('close', resolve));
    conn.close();
    await closed;
    p.client.destroy();
  });
});
