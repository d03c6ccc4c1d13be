// A controller channel over a real pure MetadataController and an in-memory log: every proposal
// commits at once, and its batch reaches the broker's MetadataFollower either at once or when the
// test releases it (a lagging broker). Tests can refuse sends (a node that is not the controller),
// answer late or never (a node behind a silent partition; the channel gives up on it after the
// caller's timeout, as the real one does), switch the active controller, or replace the
// controller with one that forgot every broker.
import assert from 'node:assert/strict';
import { ErrorCode, KafkaError } from '../../src/protocol/errors.js';
import { runOnController, type ControllerChannel, type ControllerRequest } from '../../src/cluster/controller_channel.js';
import { applyEntry } from '../../src/cluster/metadata/delta.js';
import { MetadataController, type Completion, type ControllerConfig, type ControllerReply, type Outcome } from '../../src/cluster/metadata/controller.js';
import { MetadataImage } from '../../src/cluster/metadata/image.js';
import { SharedMap } from '../../src/cluster/metadata/shared_map.js';
import { encodeBatch } from '../../src/cluster/metadata/records.js';
import type { MetadataFollower } from '../../src/cluster/metadata_follower.js';
import type { Entry } from '../../src/coordinator/raft/types.js';

export function controllerConfig(over: Partial<ControllerConfig> = {}): ControllerConfig {
  let ids = 0;
  return {
    sessionTimeoutMs: 9000, maxBrokers: 100, maxPartitions: 100_000, maxPendingBatches: 64,
    defaultPartitions: 1, defaultReplicationFactor: 1,
    newTopicId: () => (++ids).toString(16).padStart(32, '0'),
    checkTopicConfigs: () => undefined,
    leaderImbalanceCheckIntervalMs: 0, leaderImbalancePerBrokerPercentage: 10,
    ...over,
  };
}

export class FakeControllerChannel implements ControllerChannel {
  controller = new MetadataController(controllerConfig(), MetadataImage.EMPTY);
  /** The node the broker's quorum member believes active. */
  known = 1;
  /** The node that really is the active controller. */
  actual = 1;
  /** Per node, how long its answers take; Infinity for one behind a silent network partition. */
  readonly answerDelayMs = new Map<number, number>();
  /** Hold committed batches back from the follower until release(). */
  holdBack = false;
  nowMs = 0;
  readonly sent: { id: number; request: ControllerRequest }[] = [];
  private nextOffset = 0;
  private held: Entry[] = [];
  private changed: (() => void)[] = [];

  constructor(private readonly follower: MetadataFollower) {
    this.controller.activate(1, 0);
  }

  activeController(): number {
    return this.known;
  }

  controllerChange(ms: number, until?: Promise<unknown>): Promise<void> {
    return new Promise((resolve) => {
      const wake = (): void => {
        clearTimeout(timer);
        this.changed = this.changed.filter((w) => w !== wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      this.changed.push(wake);
      until?.then(wake, wake);
    });
  }

  /** The quorum names another node active. */
  learn(id: number): void {
    this.known = id;
    const waiting = this.changed;
    this.changed = [];
    for (const wake of waiting) wake();
  }

  /** A new controller whose log never saw any broker (the brokers' epochs are unknown to it). */
  forgetBrokers(): void {
    const img = this.follower.image;
    this.controller = new MetadataController(controllerConfig(), new MetadataImage(img.provenance, img.features, SharedMap.empty(), img.topicsByName, img.topicsById, img.configs, img.producerIds, img.scram, img.acls, img.quotas));
    this.controller.activate(2, this.nowMs);
  }

  release(): void {
    const entries = this.held;
    this.held = [];
    for (const e of entries) this.deliver(e);
  }

  async send(id: number, request: ControllerRequest, timeoutMs = Infinity): Promise<ControllerReply> {
    this.sent.push({ id, request });
    const delay = this.answerDelayMs.get(id) ?? 0;
    if (delay >= timeoutMs) {
      // Unreferenced: a test that moved on need not wait for a silence it no longer cares about.
      await new Promise((resolve) => setTimeout(resolve, timeoutMs).unref());
      throw new KafkaError(ErrorCode.REQUEST_TIMED_OUT, `node ${id} did not answer within ${timeoutMs} ms`);
    }
    if (delay === Infinity) return new Promise<never>(() => undefined);
    await (delay > 0 ? new Promise((resolve) => setTimeout(resolve, delay)) : Promise.resolve());
    if (id !== this.actual) throw new KafkaError(ErrorCode.NOT_CONTROLLER, `node ${id} is not the controller`);
    const outcome = runOnController(this.controller, request, this.nextOffset, this.nowMs);
    if (outcome.kind === 'answered') return outcome.reply;
    return this.commit(outcome).reply!;
  }

  /** The controller's own session check at `nowMs`: fences every broker whose session ran out. */
  expireSessions(nowMs: number): void {
    this.nowMs = nowMs;
    for (;;) {
      const outcome = this.controller.expireSessions(this.nextOffset, nowMs);
      if (outcome === null || outcome.kind !== 'propose') return;
      this.commit(outcome);
    }
  }

  private commit(outcome: Outcome & { kind: 'propose' }): Completion {
    const entry: Entry = { offset: outcome.offset, epoch: 1, kind: 'data', data: encodeBatch(outcome.records) };
    this.nextOffset = outcome.offset + 1;
    const done = this.controller.committed(outcome.offset);
    if (this.holdBack) this.held.push(entry);
    else this.deliver(entry);
    return done.at(-1)!;
  }

  private deliver(e: Entry): void {
    this.follower.publish(applyEntry(this.follower.image, e.data, { endOffset: e.offset + 1, epoch: e.epoch }));
  }
}

/** Broker 1 registered and unfenced, so replicas may be placed on it; the sends it took are forgotten. */
export async function registerBroker(channel: FakeControllerChannel): Promise<void> {
  const registered = await channel.send(1, { kind: 'registerBroker', request: { brokerId: 1, incarnationId: 'a'.repeat(32), endpoints: [{ name: 'PLAINTEXT', host: 'h', port: 1, securityProtocol: 0 }], rack: null } });
  assert.ok(registered.kind === 'registerBroker');
  const epoch = registered.brokerEpoch;
  await channel.send(1, { kind: 'heartbeat', request: { brokerId: 1, brokerEpoch: epoch, currentMetadataOffset: epoch, wantFence: false, wantShutDown: false, warm: true } });
  channel.sent.length = 0;
}
