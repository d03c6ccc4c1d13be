// Test helper: a fake leader broker's Kafka listener that understands only Fetch, for replica
// fetcher tests. Runs on the test's main thread. Every decoded request is recorded with its header
// and handed to the test's `answer`, which returns the response, or 'reset' (destroy the
// connection) or 'hang' (never answer). Invariants: every connection it accepted is destroyed by
// close(); requests it cannot decode destroy their connection.
import { createServer, type Server, type Socket } from 'node:net';
import { FetchApi, type FetchRequest, type FetchResponse, type FetchResponsePartition } from '../../src/protocol/apis/fetch.js';
import { FrameReader } from '../../src/protocol/framing.js';
import { readRequestHeader, writeResponseHeader, type RequestHeader } from '../../src/protocol/header.js';
import { Reader } from '../../src/protocol/reader.js';
import { stampBatch } from '../../src/protocol/record_batch.js';
import { encodeRecordBatch } from '../../src/protocol/records.js';
import { Writer } from '../../src/protocol/writer.js';

export interface SeenFetch {
  readonly header: RequestHeader;
  readonly request: FetchRequest;
  readonly connection: number;
}

export type FetchReply = FetchResponse | 'reset' | 'hang';

export class FakeFetchLeader {
  readonly seen: SeenFetch[] = [];
  connections = 0;
  private readonly sockets = new Set<Socket>();
  private waiters: Array<() => void> = [];

  private constructor(
    private readonly server: Server,
    readonly port: number,
    private readonly answer: (seen: SeenFetch) => FetchReply | Promise<FetchReply>,
  ) {}

  static async start(answer: (seen: SeenFetch) => FetchReply | Promise<FetchReply>): Promise<FakeFetchLeader> {
    let leader: FakeFetchLeader | null = null;
    const server = createServer((socket) => leader?.accept(socket));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    const port = typeof address === 'object' && address !== null ? address.port : 0;
    leader = new FakeFetchLeader(server, port, answer);
    return leader;
  }

  get endpoint(): { id: number; host: string; port: number } {
    return { id: 1, host: '127.0.0.1', port: this.port };
  }

  /** Resolves once `count` requests have arrived, or rejects after `ms`. */
  async requests(count: number, ms = 5000): Promise<SeenFetch[]> {
    const deadline = Date.now() + ms;
    while (this.seen.length < count) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`${this.seen.length} of ${count} fetch requests within ${ms} ms`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    return this.seen.slice(0, count);
  }

  /** Destroys every open connection (the listener stays). */
  resetAll(): void {
    for (const s of this.sockets) s.destroy();
  }

  async close(): Promise<void> {
    this.resetAll();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(socket: Socket): void {
    const connection = ++this.connections;
    this.sockets.add(socket);
    socket.on('close', () => this.sockets.delete(socket));
    socket.on('error', () => undefined);
    const frames = new FrameReader(64 << 20);
    socket.on('data', (data: Buffer) => {
      try {
        frames.push(data, (frame) => void this.handle(socket, connection, frame));
      } catch {
        socket.destroy();
      }
    });
  }

  private async handle(socket: Socket, connection: number, frame: Buffer): Promise<void> {
    const r = new Reader(frame);
    const header = readRequestHeader(r, (_key, version) => FetchApi.isFlexible(version));
    const request = FetchApi.decodeRequest(header.apiVersion, r);
    const seen = { header, request, connection };
    this.seen.push(seen);
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
    const reply = await this.answer(seen);
    if (reply === 'hang') return;
    if (reply === 'reset') {
      socket.destroy();
      return;
    }
    const w = new Writer();
    const sizeAt = w.reserveInt32();
    writeResponseHeader(w, header.correlationId, FetchApi.key, FetchApi.isFlexible(header.apiVersion));
    FetchApi.encodeResponse(header.apiVersion, reply, w);
    w.setInt32(sizeAt, w.length - 4);
    for (const chunk of w.finish()) socket.write(chunk);
  }
}

/** A record batch of `count` records at `baseOffset`, stamped with `leaderEpoch`. */
export function testBatch(baseOffset: number, count: number, leaderEpoch = 0, tag = 'r'): Buffer {
  const records = Array.from({ length: count }, (_, i) => ({ key: null, value: Buffer.from(`${tag}-${baseOffset + i}`), headers: [], timestamp: 1_700_000_000_000 }));
  const batch = encodeRecordBatch(records);
  stampBatch(batch, baseOffset, leaderEpoch);
  return batch;
}

/** A response partition with the fields a replica fetcher reads, and -1 hints. */
export function answerPartition(partitionIndex: number, fields: Partial<FetchResponsePartition> = {}): FetchResponsePartition {
  return {
    partitionIndex,
    errorCode: 0,
    highWatermark: 0,
    lastStableOffset: -1,
    logStartOffset: 0,
    divergingEpoch: { epoch: -1, endOffset: -1 },
    currentLeader: { leaderId: -1, leaderEpoch: -1 },
    snapshotId: { endOffset: -1, epoch: -1 },
    abortedTransactions: null,
    preferredReadReplica: -1,
    records: null,
    ...fields,
  };
}

/** A whole Fetch response. */
export function fetchResponse(responses: FetchResponse['responses'], errorCode = 0): FetchResponse {
  return { throttleTimeMs: 0, errorCode, sessionId: 0, responses, nodeEndpoints: [] };
}
