// A pure MetadataController over an in-memory log that takes every proposal at the next offset
// and commits on demand, with registered and unfenced brokers; for the controller's unit tests.
import assert from 'node:assert/strict';
import {
  MetadataController, type ControllerConfig, type ControllerReply, type Outcome,
} from '../../src/cluster/metadata/controller.js';
import { MetadataImage } from '../../src/cluster/metadata/image.js';
import type { MetadataRecord } from '../../src/cluster/metadata/records.js';
import { ErrorCode, KafkaError } from '../../src/protocol/errors.js';

export const SESSION_MS = 9000;

export function config(over: Partial<ControllerConfig> = {}): ControllerConfig {
  let ids = 0;
  return {
    sessionTimeoutMs: SESSION_MS, maxBrokers: 100, maxPartitions: 100_000, maxPendingBatches: 64,
    defaultPartitions: 3, defaultReplicationFactor: 3,
    newTopicId: () => (++ids).toString(16).padStart(32, '0'),
    checkTopicConfigs: (c) => {
      if ('bad' in c) throw new KafkaError(ErrorCode.INVALID_CONFIG, 'bad config');
    },
    leaderImbalanceCheckIntervalMs: 0, leaderImbalancePerBrokerPercentage: 10,
    ...over,
  };
}

/** A controller over a log that takes every proposal at the next offset and commits on demand. */
export class Harness {
  readonly c: MetadataController;
  next = 0;
  readonly replies = new Map<number, ControllerReply | null>();
  epochs = new Map<number, number>();
  /** Every batch proposed, as a standby would read them from the log. */
  readonly log: { offset: number; records: readonly MetadataRecord[] }[] = [];

  constructor(cfg: ControllerConfig = config(), now = 0) {
    this.c = new MetadataController(cfg, MetadataImage.EMPTY);
    this.c.activate(1, now);
  }

  /** The reply at once, or the offset it waits on. */
  run(step: (next: number) => Outcome): ControllerReply | number {
    const out = step(this.next);
    if (out.kind === 'answered') return out.reply;
    this.log.push(out);
    this.next++;
    return out.offset;
  }

  commitAll(): (ControllerReply | null)[] {
    return this.c.committed(this.next - 1).map((d) => d.reply);
  }

  /** Runs a request and commits it; returns its reply. */
  now<R extends ControllerReply>(step: (next: number) => Outcome): R {
    const r = this.run(step);
    if (typeof r !== 'number') return r as R;
    const done = this.c.committed(r);
    return done[done.length - 1]!.reply as R;
  }

  /** Registers and unfences brokers (racks by the function), committed. */
  brokers(ids: readonly number[], rack: (id: number) => string | null = () => null, now = 0): Map<number, number> {
    const epochs = new Map<number, number>();
    for (const id of ids) {
      const r = this.now<Extract<ControllerReply, { kind: 'registerBroker' }>>((next) => this.c.registerBroker({
        brokerId: id, incarnationId: (id + 1).toString(16).padStart(32, 'a'), rack: rack(id),
        endpoints: [{ name: 'PLAINTEXT', host: `b${id}`, port: 9092, securityProtocol: 0 }],
      }, next, now));
      assert.equal(r.errorCode, ErrorCode.NONE);
      epochs.set(id, r.brokerEpoch);
    }
    for (const id of ids) {
      const hb = this.now<Extract<ControllerReply, { kind: 'heartbeat' }>>((next) => this.c.heartbeat({ brokerId: id, brokerEpoch: epochs.get(id)!, currentMetadataOffset: this.next, wantFence: false, wantShutDown: false, warm: true }, next, now));
      assert.equal(hb.isFenced, false);
    }
    for (const [id, e] of epochs) this.epochs.set(id, e);
    return epochs;
  }
}

