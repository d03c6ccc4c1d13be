// The peers `sluice bench --vs` runs beside Sluice (bench driver, main thread): a fresh
// redis-server or nats-server (JetStream, file storage) on a free 127.0.0.1 port with its own
// temp dir, and a client for each that publishes stamped messages and consumes them back.
// Redis Streams: XADD pipelined on one connection (replies in order), XREAD BLOCK on another.
// NATS JetStream: PUB with a reply subject per message (the stream's ack answers it), and a
// subscription on the stream's subject on another connection (core delivery of the same messages).
// Bounds: a server start and every control request have deadlines; a server is stopped by its pid
// (SIGTERM, SIGKILL after a deadline) and its temp dir removed; a missing server binary makes the
// peer unavailable with the reason, never a failure of the bench.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { openSocket } from './load/pipelined_producer.js';
import { NatsReader, RespError, RespReader, natsPub, respCommand } from './peer_wire.js';
import type { RespValue } from './peer_wire.js';

export const PEER_IDS = ['redis', 'nats'] as const;
export type PeerId = (typeof PEER_IDS)[number];

const HOST = '127.0.0.1';
const START_TIMEOUT_MS = 15_000;
const STOP_TIMEOUT_MS = 5_000;
/** Redis keeps a stream in memory: trimmed (approximately) to this many entries. */
const REDIS_STREAM_MAX = 2_000_000;

export interface PeerServer {
  readonly id: PeerId;
  /** What it is, for the report: name and version. */
  readonly label: string;
  readonly pid: number;
  readonly port: number;
  /** Whether a client's consume() also reads what was stored before it started (a backlog to drain). */
  readonly replaysStored: boolean;
  /** A client on its own stream (Redis key, NATS stream and subject) named after `run`. */
  open(run: string): Promise<PeerClient>;
  stop(): Promise<void>;
}

/** A peer's publish/consume client; every stamp is read back by the caller from the payload. */
export interface PeerClient {
  /** Sends one message; `onAck(ok)` runs when the server acknowledges it. */
  publish(payload: Buffer, onAck: (ok: boolean) => void): void;
  /** Flushes what publish() queued (one socket write per tick). */
  flush(): void;
  /** Starts delivering the messages published from now on (and, when the server replaysStored, those stored before), in order. */
  consume(onMessage: (payload: Buffer) => void): void;
  close(): void;
}

export function onPath(cmd: string): boolean {
  return (process.env['PATH'] ?? '').split(delimiter).some((d) => d !== '' && existsSync(join(d, cmd)));
}

const SERVER_BINARY: Readonly<Record<PeerId, string>> = { redis: 'redis-server', nats: 'nats-server' };

/** Why a peer cannot run here, or null when it can. */
export function peerUnavailable(id: PeerId): string | null {
  const bin = SERVER_BINARY[id];
  return onPath(bin) ? null : `${bin} not installed (apt-get install -y ${bin})`;
}

export function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, HOST, () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr !== null ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

/** A loopback connection with Nagle off (every flush is a batch already). */
async function openPeerSocket(port: number, timeoutMs: number): Promise<Socket> {
  const socket = await openSocket(HOST, port, timeoutMs);
  socket.setNoDelay(true);
  return socket;
}

async function waitListening(child: ChildProcess, port: number): Promise<void> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`exited with ${child.exitCode} before listening`);
    try {
      (await openSocket(HOST, port, 1000)).destroy();
      return;
    } catch {
      if (Date.now() > deadline) throw new Error(`not listening on ${HOST}:${port} after ${START_TIMEOUT_MS} ms`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

interface ServerKind {
  readonly id: PeerId;
  readonly args: (port: number, dir: string) => string[];
  readonly label: string;
  readonly replaysStored: boolean;
  readonly open: (port: number, run: string) => Promise<PeerClient>;
}

async function startServer({ id, args, label, replaysStored, open }: ServerKind): Promise<PeerServer> {
  const port = await freeLoopbackPort();
  const dir = mkdtempSync(join(tmpdir(), `sluice-bench-${id}-`));
  const child = spawn(SERVER_BINARY[id], args(port, dir), { stdio: 'ignore' });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.once('error', () => undefined);
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
    await exited;
    clearTimeout(timer);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitListening(child, port);
  } catch (err) {
    await stop();
    throw new Error(`${SERVER_BINARY[id]}: ${err instanceof Error ? err.message : String(err)}`);
  }
  return { id, label, pid: child.pid ?? -1, port, replaysStored, open: (run) => open(port, run), stop };
}

/** One RESP connection: commands pipelined, each reply handed to the callback of its command. */
class RespConnection {
  private readonly waiting: ((reply: RespValue) => void)[] = [];
  private queued: Buffer[] = [];
  private readonly reader = new RespReader();

  constructor(private readonly socket: Socket) {
    socket.on('data', (chunk: Buffer) => {
      for (const reply of this.reader.push(chunk)) this.waiting.shift()?.(reply);
    });
    socket.on('error', () => undefined);
  }

  send(args: readonly (string | Buffer)[], onReply: (reply: RespValue) => void): void {
    this.queued.push(respCommand(args));
    this.waiting.push(onReply);
  }

  flush(): void {
    if (this.queued.length === 0) return;
    this.socket.write(this.queued.length === 1 ? (this.queued[0] as Buffer) : Buffer.concat(this.queued));
    this.queued = [];
  }

  call(args: readonly (string | Buffer)[]): Promise<RespValue> {
    return new Promise((resolve, reject) => {
      this.send(args, (r) => (r instanceof RespError ? reject(new Error(r.message)) : resolve(r)));
      this.flush();
    });
  }

  close(): void {
    this.socket.destroy();
  }
}

async function openRedis(port: number, run: string): Promise<PeerClient> {
  const stream = `sluice-bench-${run}`;
  const producer = new RespConnection(await openPeerSocket(port, START_TIMEOUT_MS));
  const consumer = new RespConnection(await openPeerSocket(port, START_TIMEOUT_MS));
  let consuming = false;
  let lastId = '0';
  const readMore = (onMessage: (payload: Buffer) => void): void => {
    consumer.send(['XREAD', 'COUNT', '1000', 'BLOCK', '100', 'STREAMS', stream, lastId], (reply) => {
      // [[stream, [[id, [field, value]], ...]]] or nil on timeout.
      if (Array.isArray(reply)) {
        const entries = (reply[0] as RespValue[] | undefined)?.[1];
        if (Array.isArray(entries)) {
          for (const e of entries) {
            if (!Array.isArray(e)) continue;
            const [id, fields] = e;
            if (Buffer.isBuffer(id)) lastId = id.toString('latin1');
            const value = Array.isArray(fields) ? fields[1] : undefined;
            if (Buffer.isBuffer(value)) onMessage(value);
          }
        }
      }
      if (consuming) readMore(onMessage);
    });
    consumer.flush();
  };
  return {
    publish: (payload, onAck) => producer.send(['XADD', stream, 'MAXLEN', '~', String(REDIS_STREAM_MAX), '*', 'v', payload], (r) => onAck(!(r instanceof RespError))),
    flush: () => producer.flush(),
    consume: (onMessage) => {
      consuming = true;
      readMore(onMessage);
    },
    close: () => {
      consuming = false;
      producer.close();
      consumer.close();
    },
  };
}

export async function startRedis(): Promise<PeerServer> {
  const version = await commandOutput('redis-server', ['--version']);
  return startServer({
    id: 'redis',
    args: (port, dir) => ['--port', String(port), '--bind', HOST, '--dir', dir, '--save', '', '--appendonly', 'no', '--logfile', join(dir, 'log')],
    label: `Redis Streams (${/v=(\S+)/.exec(version)?.[1] ?? 'redis'}, in memory)`,
    replaysStored: true,
    open: openRedis,
  });
}

/** One NATS connection: ops parsed, PINGs answered, MSGs handed to the subscription's callback. */
class NatsConnection {
  private readonly reader = new NatsReader();
  private readonly subs = new Map<string, (subject: string, payload: Buffer) => void>();
  private queued: Buffer[] = [];
  private nextSid = 1;
  private pongs: (() => void)[] = [];
  error: string | null = null;

  constructor(private readonly socket: Socket) {
    socket.on('data', (chunk: Buffer) => {
      for (const op of this.reader.push(chunk)) {
        if (op.op === 'MSG') this.subs.get(op.sid)?.(op.subject, op.payload);
        else if (op.op === 'PING') socket.write('PONG\r\n');
        else if (op.op === 'PONG') this.pongs.shift()?.();
        else if (op.op === '-ERR') this.error = op.message;
      }
    });
    socket.on('error', () => undefined);
  }

  static async open(port: number): Promise<NatsConnection> {
    const c = new NatsConnection(await openPeerSocket(port, START_TIMEOUT_MS));
    c.socket.write('CONNECT {"verbose":false,"pedantic":false,"name":"sluice-bench"}\r\n');
    await c.ping();
    return c;
  }

  /** Round trip: everything written before has been processed by the server. */
  ping(): Promise<void> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`NATS: no PONG in ${START_TIMEOUT_MS} ms`)), START_TIMEOUT_MS);
      this.pongs.push(() => {
        clearTimeout(timer);
        resolve();
      });
      this.flush();
      this.socket.write('PING\r\n');
    });
  }

  subscribe(subject: string, onMsg: (subject: string, payload: Buffer) => void): void {
    const sid = String(this.nextSid++);
    this.subs.set(sid, onMsg);
    this.queued.push(Buffer.from(`SUB ${subject} ${sid}\r\n`));
  }

  publish(subject: string, replyTo: string | null, payload: Buffer): void {
    this.queued.push(natsPub(subject, replyTo, payload));
  }

  flush(): void {
    if (this.queued.length === 0) return;
    this.socket.write(Buffer.concat(this.queued));
    this.queued = [];
  }

  /** A request/reply round trip (JetStream's API). */
  request(subject: string, body: string): Promise<string> {
    const inbox = `_INBOX.sluice-bench-api.${this.nextSid}`;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`NATS: no reply to ${subject} in ${START_TIMEOUT_MS} ms`)), START_TIMEOUT_MS);
      this.subscribe(inbox, (_s, payload) => {
        clearTimeout(timer);
        resolve(payload.toString('utf8'));
      });
      this.publish(subject, inbox, Buffer.from(body));
      this.flush();
    });
  }

  close(): void {
    this.socket.destroy();
  }
}

const ACK_INBOX = '_INBOX.sluice-bench-ack';

async function openNats(port: number, run: string): Promise<PeerClient> {
  const name = `SLUICEBENCH_${run.replace(/[^A-Za-z0-9]/g, '_')}`;
  const subject = `sluice.bench.${run.replace(/[^A-Za-z0-9-]/g, '_')}`;
  const producer = await NatsConnection.open(port);
  const consumer = await NatsConnection.open(port);
  const created = await producer.request(`$JS.API.STREAM.CREATE.${name}`, JSON.stringify({ name, subjects: [subject], storage: 'file', retention: 'limits' }));
  const err = (JSON.parse(created) as { error?: { description?: string } }).error;
  if (err !== undefined) throw new Error(`NATS JetStream stream create: ${err.description ?? created}`);
  const pending = new Map<number, (ok: boolean) => void>();
  let seq = 0;
  producer.subscribe(`${ACK_INBOX}.*`, (subject, payload) => {
    const n = Number(subject.slice(ACK_INBOX.length + 1));
    const onAck = pending.get(n);
    pending.delete(n);
    onAck?.(!payload.includes('"error"'));
  });
  // Subscribed (and confirmed by a round trip) before the first publish, so none is missed; the
  // messages before consume() is called are not delivered, as a subscription started then would not.
  let deliver: ((payload: Buffer) => void) | null = null;
  consumer.subscribe(subject, (_s, payload) => deliver?.(payload));
  await Promise.all([producer.ping(), consumer.ping()]);
  return {
    publish: (payload, onAck) => {
      const n = seq++;
      pending.set(n, onAck);
      producer.publish(subject, `${ACK_INBOX}.${n}`, payload);
    },
    flush: () => producer.flush(),
    consume: (onMessage) => {
      deliver = onMessage;
    },
    close: () => {
      producer.close();
      consumer.close();
    },
  };
}

export async function startNats(): Promise<PeerServer> {
  const version = await commandOutput('nats-server', ['--version']);
  return startServer({
    id: 'nats',
    args: (port, dir) => ['-a', HOST, '-p', String(port), '-js', '-sd', dir],
    label: `NATS JetStream (${version.trim().replace(/^nats-server:\s*/, '') || 'nats-server'}, file storage)`,
    // Its client reads with a core subscription, which sees new messages only.
    replaysStored: false,
    open: openNats,
  });
}

export function startPeer(id: PeerId): Promise<PeerServer> {
  return id === 'redis' ? startRedis() : startNats();
}

function commandOutput(cmd: string, args: readonly string[]): Promise<string> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'ignore'] });
    let out = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), START_TIMEOUT_MS);
    child.stdout.on('data', (d: Buffer) => { out = (out + d.toString('utf8')).slice(0, 4096); });
    child.once('error', () => resolve(''));
    child.once('close', () => {
      clearTimeout(timer);
      resolve(out);
    });
  });
}
