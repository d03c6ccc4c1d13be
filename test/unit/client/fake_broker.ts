// Test-only fake Kafka broker on 127.0.0.1 (tests only). It frames naively, answers ApiVersions
// itself (like an old broker when asked for a version above `apiVersionsMax`) and hands every
// other request to a per-API handler (which may hold its answer back); answers leave strictly in
// arrival order, each after `answerDelayMs`, so pipelined requests pile up and can be counted.
// twoBrokers() pairs two of them behind one fixed Metadata answer.
import { createServer } from 'node:net';
import type { AddressInfo, Server, Socket } from 'node:net';
import { ErrorCode } from '../../../src/protocol/errors.js';
import { readRequestHeader, writeResponseHeader } from '../../../src/protocol/header.js';
import type { RequestHeader } from '../../../src/protocol/header.js';
import { ApiVersionsApi } from '../../../src/protocol/apis/api_versions.js';
import { FetchApi } from '../../../src/protocol/apis/fetch.js';
import type { FetchResponse, FetchResponsePartition } from '../../../src/protocol/apis/fetch.js';
import { MetadataApi } from '../../../src/protocol/apis/metadata.js';
import type { ApiVersionsResponse } from '../../../src/protocol/apis/api_versions.js';
import { advertisedApis, isFlexibleRequest } from '../../../src/protocol/apis/index.js';
import { Reader } from '../../../src/protocol/reader.js';
import { ZERO_UUID } from '../../../src/protocol/schema.js';
import type { Api } from '../../../src/protocol/schema.js';
import { Writer } from '../../../src/protocol/writer.js';

/**
 * Answers one request: an encoded response frame (see respond()), null for no answer, or a promise
 * of the frame for an answer held back (the answers after it on that connection wait for it).
 */
export type FakeHandler = (header: RequestHeader, body: Reader) => Buffer | null | Promise<Buffer>;

export interface FakeOptions {
  apiVersionsMax?: number;
  /** Advertised ranges by API key; default: every API of our codec with its full range. */
  advertise?: ReadonlyMap<number, [number, number]>;
  handlers?: ReadonlyMap<number, FakeHandler>;
  answerDelayMs?: number;
}

/** Encodes a whole response frame (size prefix, header, body) with our codec. */
export function respond<Req, Res>(api: Api<Req, Res>, version: number, correlationId: number, res: Res): Buffer {
  const w = new Writer();
  const at = w.reserveInt32();
  writeResponseHeader(w, correlationId, api.key, api.isFlexible(version));
  api.encodeResponse(version, res, w);
  w.setInt32(at, w.length - 4);
  return Buffer.concat(w.finish());
}

export class FakeBroker {
  readonly seen: RequestHeader[] = [];
  /** Connections accepted so far. */
  accepted = 0;
  maxOutstanding = 0;
  private outstanding = 0;
  private readonly sockets = new Set<Socket>();
  private readonly server: Server;

  private constructor(private readonly opts: FakeOptions) {
    this.server = createServer((socket) => this.serve(socket));
  }

  static async start(opts: FakeOptions = {}): Promise<FakeBroker> {
    const fake = new FakeBroker(opts);
    await new Promise<void>((resolve) => fake.server.listen(0, '127.0.0.1', resolve));
    return fake;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  async stop(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private serve(socket: Socket): void {
    this.accepted++;
    this.sockets.add(socket);
    socket.on('close', () => this.sockets.delete(socket));
    socket.on('error', () => undefined);
    let buffered = Buffer.alloc(0);
    let answering = Promise.resolve();
    socket.on('data', (data: Buffer) => {
      buffered = Buffer.concat([buffered, data]);
      while (buffered.length >= 4 && buffered.length >= 4 + buffered.readInt32BE(0)) {
        const frame = buffered.subarray(4, 4 + buffered.readInt32BE(0));
        buffered = buffered.subarray(4 + frame.length);
        const reply = this.handle(frame);
        if (reply === null) continue;
        this.outstanding++;
        this.maxOutstanding = Math.max(this.maxOutstanding, this.outstanding);
        answering = answering.then(async () => {
          const answer = await reply;
          await new Promise((r) => setTimeout(r, this.opts.answerDelayMs ?? 0));
          this.outstanding--;
          if (!socket.destroyed) socket.write(answer);
        });
      }
    });
  }

  private handle(frame: Buffer): Buffer | null | Promise<Buffer> {
    const r = new Reader(frame);
    const h = readRequestHeader(r, isFlexibleRequest);
    this.seen.push(h);
    if (h.apiKey === ApiVersionsApi.key) return this.apiVersions(h);
    return this.opts.handlers?.get(h.apiKey)?.(h, r) ?? null;
  }

  private apiVersions(h: RequestHeader): Buffer {
    const max = this.opts.apiVersionsMax ?? 3;
    const tooNew = h.apiVersion > max;
    const ranges = this.opts.advertise ?? new Map(advertisedApis.map((a) => [a.key, [a.minVersion, a.maxVersion]]));
    const keys = [...ranges].filter(([key]) => key !== ApiVersionsApi.key).map(([apiKey, [minVersion, maxVersion]]) => ({ apiKey, minVersion, maxVersion }));
    const self = { apiKey: ApiVersionsApi.key, minVersion: 0, maxVersion: max };
    const res: ApiVersionsResponse = {
      errorCode: tooNew ? ErrorCode.UNSUPPORTED_VERSION : ErrorCode.NONE,
      apiKeys: tooNew ? [self] : [self, ...keys],
      throttleTimeMs: 0,
      supportedFeatures: [],
      finalizedFeaturesEpoch: -1,
      finalizedFeatures: [],
      zkMigrationReady: false,
    };
    return respond(ApiVersionsApi, tooNew ? 0 : h.apiVersion, h.correlationId, res);
  }
}

export interface TwoBrokers {
  readonly fakes: readonly [FakeBroker, FakeBroker];
  metadataRequests(): number;
  stop(): Promise<void>;
}

/**
 * Brokers 0 and 1 with these per-API handlers; every Metadata answer (from either) names topic
 * `t` with partition i led by `leaders[i]` at leader epoch 1 (default: one partition on broker 0).
 */
export async function twoBrokers(handlers: readonly [Map<number, FakeHandler>, Map<number, FakeHandler>], leaders: readonly number[] = [0]): Promise<TwoBrokers> {
  let metadata = 0;
  const ports = [0, 0];
  const metadataHandler: FakeHandler = (h, r) => {
    metadata++;
    MetadataApi.decodeRequest(h.apiVersion, r);
    return respond(MetadataApi, h.apiVersion, h.correlationId, {
      throttleTimeMs: 0,
      brokers: ports.map((port, nodeId) => ({ nodeId, host: '127.0.0.1', port, rack: null })),
      clusterId: 'fake', controllerId: 0, clusterAuthorizedOperations: -2147483648,
      topics: [{
        errorCode: 0, name: 't', topicId: ZERO_UUID, isInternal: false, topicAuthorizedOperations: -2147483648,
        partitions: leaders.map((leaderId, partitionIndex) => ({ errorCode: 0, partitionIndex, leaderId, leaderEpoch: 1, replicaNodes: [0, 1], isrNodes: [0, 1], offlineReplicas: [] })),
      }],
    });
  };
  const fakes = await Promise.all(handlers.map((h) => FakeBroker.start({ handlers: new Map([...h, [MetadataApi.key, metadataHandler]]) }))) as [FakeBroker, FakeBroker];
  fakes.forEach((f, i) => { ports[i] = f.port; });
  return { fakes, metadataRequests: () => metadata, stop: async () => { await Promise.all(fakes.map((f) => f.stop())); } };
}

/** A Fetch answer for partition `partitionIndex` of topic `t`: no error, high watermark 10, no records unless `part` says. */
export function fetchAnswer(h: RequestHeader, part: Partial<FetchResponsePartition>, partitionIndex = 0): Buffer {
  const res: FetchResponse = {
    throttleTimeMs: 0, errorCode: 0, sessionId: 0, nodeEndpoints: [],
    responses: [{ topic: 't', topicId: ZERO_UUID, partitions: [{
      partitionIndex, errorCode: 0, highWatermark: 10, lastStableOffset: 10, logStartOffset: 0,
      divergingEpoch: { epoch: -1, endOffset: -1 }, currentLeader: { leaderId: -1, leaderEpoch: -1 }, snapshotId: { endOffset: -1, epoch: -1 },
      abortedTransactions: null, preferredReadReplica: -1, records: null, ...part,
    }] }],
  };
  return respond(FetchApi, h.apiVersion, h.correlationId, res);
}
