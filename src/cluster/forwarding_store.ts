// The MetadataStore of a broker in a metadata quorum: TopicAdmin's validated change goes to the
// active controller (following leadership changes within the request's timeout, capped by the
// store's maximum), and the answer is held back until this broker's own image shows what the
// controller committed (the topic id it created, the partition count it reached, the topic id
// gone), so the client that is answered finds the change in this broker's Metadata at once. A
// request that asked not to wait (timeout <= 0) hands the change to the controller and is
// answered REQUEST_TIMED_OUT at once. Main thread.
import { ErrorCode, KafkaError } from '../protocol/errors.js';
import type { ClusterView, TopicImage } from './cluster_view.js';
import { callActiveController, type ControllerChannel, type ControllerRequest } from './controller_channel.js';
import type { ControllerReply, TopicResult } from './metadata/controller.js';
import type { MetadataImage } from './metadata/image.js';
import type { AppliedMetadata } from './metadata_follower.js';
import type { Committed, MetadataStore, TopicChange } from './metadata_store.js';

/** Bound on changes handed to the controller for requests that did not wait (timeout <= 0): each holds a controller call open. */
export const MAX_UNAWAITED_CHANGES = 1_000;

export class ForwardingMetadataStore implements MetadataStore {
  private unawaited = 0;

  constructor(
    private readonly channel: ControllerChannel,
    private readonly metadata: AppliedMetadata,
    private readonly view: ClusterView,
    /**
     * How long one change may take, leader changes included, when the caller names no timeout;
     * also the cap on a client's timeout, so no request parks a change for longer.
     */
    private readonly maxTimeoutMs: number,
  ) {}

  async propose(change: TopicChange, timeoutMs = this.maxTimeoutMs): Promise<Committed> {
    const before = this.view.topic(change.name);
    if (change.kind !== 'createTopic' && before === undefined) {
      throw new KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `unknown topic '${change.name}'`);
    }
    const request = requestOf(change, before);
    if (timeoutMs <= 0) this.startUnawaited(request, change.name, timeoutMs);
    const budget = Math.min(timeoutMs, this.maxTimeoutMs);
    const started = performance.now();
    const reply = await callActiveController(this.channel, request, budget);
    const left = Math.max(1, budget - (performance.now() - started));
    let result: TopicResult;
    try {
      result = resultFor(reply, change.name);
    } catch (err) {
      // Another broker created it first: the refusal waits until this broker sees that topic, so the caller can read it.
      if (err instanceof KafkaError && err.code === ErrorCode.TOPIC_ALREADY_EXISTS) await this.metadata.until((image) => image.topicsByName.has(change.name), left);
      throw err;
    }
    // A created topic's id is the controller's; CreatePartitions answers name no id.
    const topicId = before?.id ?? result.topicId;
    await this.metadata.until((image) => shows(image, request, topicId), left);
    const topic = change.kind === 'deleteTopic' ? before : this.view.topic(change.name);
    if (topic === undefined) {
      // Applied, yet gone (or not there): a later change overtook this one.
      throw new KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `topic '${change.name}' changed again before the answer`);
    }
    return { revision: this.view.revision, topic };
  }

  /**
   * Hands `request` to the controller without waiting for it (within the store's own timeout)
   * and answers REQUEST_TIMED_OUT: the change may still complete, as the client asked.
   */
  private startUnawaited(request: ControllerRequest, name: string, timeoutMs: number): never {
    if (this.unawaited >= MAX_UNAWAITED_CHANGES) {
      throw new KafkaError(ErrorCode.REQUEST_TIMED_OUT, `topic '${name}' not changed: ${this.unawaited} changes already wait for the controller unawaited`);
    }
    this.unawaited++;
    // Its outcome is nobody's answer any more; a refusal or a timeout only ends the call.
    const settled = (): void => {
      this.unawaited--;
    };
    callActiveController(this.channel, request, this.maxTimeoutMs).then(settled, settled);
    throw new KafkaError(ErrorCode.REQUEST_TIMED_OUT, `the change to topic '${name}' was handed to the controller; the request's timeout (${timeoutMs} ms) did not wait for it`);
  }
}

function requestOf(change: TopicChange, before: TopicImage | undefined): ControllerRequest {
  switch (change.kind) {
    case 'createTopic':
      return {
        kind: 'createTopics',
        topics: [{ name: change.name, numPartitions: -1, replicationFactor: -1, assignment: change.assignment, configs: change.configs }],
      };
    case 'createPartitions':
      return { kind: 'createPartitions', name: change.name, count: (before?.partitions ?? 0) + change.assignment.length, assignment: change.assignment };
    case 'deleteTopic':
      return { kind: 'deleteTopics', names: [change.name] };
  }
}

/** The controller's verdict on the one topic the request named; a refusal throws with its code. */
function resultFor(reply: ControllerReply, name: string): TopicResult {
  if (reply.kind !== 'topics') throw new KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR, `the controller answered a topic change with ${reply.kind}`);
  const result = reply.results.find((r) => r.name === name);
  if (result === undefined) throw new KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR, `the controller's answer does not name topic '${name}'`);
  if (result.errorCode !== ErrorCode.NONE) throw new KafkaError(result.errorCode, result.message ?? undefined);
  return result;
}

/** Whether `image` holds the committed change (or something later that replaced it). */
function shows(image: MetadataImage, request: ControllerRequest, topicId: string): boolean {
  switch (request.kind) {
    case 'createTopics':
      return image.topicsById.has(topicId);
    case 'createPartitions': {
      const t = image.topicsById.get(topicId);
      return t === undefined || t.partitions >= request.count;
    }
    default:
      return !image.topicsById.has(topicId);
  }
}
