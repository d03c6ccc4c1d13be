// The addon's socket sender over real loopback sockets: ordering of bytes and file ranges, large
// ranges to a slow reader without blocking the event loop, peer failures, detach freeing every
// fd, and no bytes reaching a socket that reuses a detached connection's fd number.
import assert from 'node:assert/strict';
import { closeSync, mkdtempSync, openSync, readdirSync, rmSync, writeSync } from 'node:fs';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { nativeSender, type NativeSender, type SenderListener } from '../../../src/net/native_sender.js';
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
    const path = join(dir, 'segment.log');
    const wfd = openSync(path, 'w');
    writeSync(wfd, fileBytes);
    closeSync(wfd);
    fileFd = openSync(path, 'r');
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
});
