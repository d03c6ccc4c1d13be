// A broker's requests to the active controller (broker registration and heartbeats, forwarded
// topic changes, leader elections and reassignments, producer-id blocks, partition leaders' ISR changes, unregistrations) as the broker side sees them: one typed request, one typed
// reply, sent once the request's records committed. Which node is active comes from
// the local quorum member; the channel carries a request to a named controller over the
// controller listener. callActiveController adds the one retry rule every caller shares: a
// controller that is not (or no longer) active answers NOT_CONTROLLER, a lost connection fails
// the same way, a request still unanswered when the quorum names another node is abandoned the
// same way, and the request goes again to whichever node the quorum names next, until the
// caller's deadline. Main thread.
import { ErrorCode, KafkaError } from '../protocol/errors.js';
import type {
  CreatableTopic, ControllerReply, ElectionPartitions, HeartbeatRequest, MetadataController, Outcome, RegisterBrokerRequest, TopicPartitions,
} from './metadata/controller.js';
import type { AlterConfigsRequest } from './metadata/config_changes.js';
import type { AlterScramRequest } from './metadata/scram_changes.js';
import type { AclCreation } from './metadata/acl_changes.js';
import type { AclFilter } from '../coordinator/acl/acl.js';
import type { AlterClientQuotasRequest } from '../protocol/apis/client_quotas.js';
import type { AlterPartitionRequest, ReassignmentTopic } from './metadata/replication_control.js';

export type ControllerRequest =
  | { readonly kind: 'registerBroker'; readonly request: RegisterBrokerRequest }
  | { readonly kind: 'heartbeat'; readonly request: HeartbeatRequest }
  | { readonly kind: 'createTopics'; readonly topics: readonly CreatableTopic[] }
  | { readonly kind: 'createPartitions'; readonly name: string; readonly count: number; readonly assignment: readonly (readonly number[])[] | null }
  | { readonly kind: 'deleteTopics'; readonly names: readonly string[] }
  | { readonly kind: 'allocateProducerIds'; readonly brokerId: number; readonly brokerEpoch: number }
  | { readonly kind: 'alterPartition'; readonly request: AlterPartitionRequest }
  | { readonly kind: 'electLeaders'; readonly electionType: number; readonly partitions: ElectionPartitions }
  | { readonly kind: 'alterPartitionReassignments'; readonly topics: readonly ReassignmentTopic[] }
  | { readonly kind: 'listPartitionReassignments'; readonly topics: TopicPartitions }
  | { readonly kind: 'alterConfigs'; readonly request: AlterConfigsRequest }
  | { readonly kind: 'alterScramCredentials'; readonly request: AlterScramRequest }
  | { readonly kind: 'createAcls'; readonly creations: readonly AclCreation[] }
  | { readonly kind: 'deleteAcls'; readonly filters: readonly AclFilter[] }
  | { readonly kind: 'alterClientQuotas'; readonly request: AlterClientQuotasRequest }
  | { readonly kind: 'unregisterBroker'; readonly brokerId: number };

export interface ControllerChannel {
  /** The active controller as the local quorum member last learned it; -1 when none is known. */
  activeController(): number;
  /**
   * Resolves when activeController() changes, or after `ms` at the latest, or once `until`
   * settles; each way its timer is cleared (a waiter that lost interest costs no wake-up later).
   * A promise rather than an AbortSignal: abort() builds a DOMException with a stack, which a
   * profile of an idle broker showed on every heartbeat.
   */
  controllerChange(ms: number, until?: Promise<unknown>): Promise<void>;
  /**
   * Sends one request to controller `id`. A node that is not the active controller answers with
   * NOT_CONTROLLER in the reply; a node that cannot be reached within `timeoutMs` rejects with a
   * KafkaError (NOT_CONTROLLER when the connection failed, REQUEST_TIMED_OUT when it was silent).
   */
  send(id: number, request: ControllerRequest, timeoutMs: number): Promise<ControllerReply>;
}

/** A controller that lost (or never had) leadership refuses every request, each topic included. */
function isNotController(reply: ControllerReply): boolean {
  if (reply.kind === 'topics') return reply.results.length > 0 && reply.results.every((r) => r.errorCode === ErrorCode.NOT_CONTROLLER);
  return reply.errorCode === ErrorCode.NOT_CONTROLLER;
}

/** Pause before asking the same controller again when the quorum has not named another yet. */
export const CONTROLLER_RETRY_BACKOFF_MS = 50;

/**
 * Sends `request` to the active controller, following leadership changes until `timeoutMs` has
 * passed; then rejects with REQUEST_TIMED_OUT (or the last NOT_CONTROLLER). Errors other than
 * NOT_CONTROLLER are the controller's answer and reject at once.
 */
export async function callActiveController(channel: ControllerChannel, request: ControllerRequest, timeoutMs: number): Promise<ControllerReply> {
  const deadline = performance.now() + timeoutMs;
  let last: KafkaError | null = null;
  for (;;) {
    const left = deadline - performance.now();
    if (left <= 0) throw last ?? new KafkaError(ErrorCode.REQUEST_TIMED_OUT, `no active controller within ${timeoutMs} ms`);
    const id = channel.activeController();
    if (id === -1) {
      await channel.controllerChange(left);
      continue;
    }
    try {
      const reply = await sendWhileActive(channel, id, request, left);
      if (reply !== 'moved' && !isNotController(reply)) return reply;
      last = new KafkaError(ErrorCode.NOT_CONTROLLER, reply === 'moved' ? `node ${id} stopped being the active controller before it answered` : `node ${id} is not the active controller`);
    } catch (err) {
      if (!(err instanceof KafkaError) || err.code !== ErrorCode.NOT_CONTROLLER) throw err;
      last = err;
    }
    // Wait for the quorum to name someone else, but not forever: it may name the same node again.
    if (channel.activeController() === id) await channel.controllerChange(Math.min(CONTROLLER_RETRY_BACKOFF_MS, Math.max(0, deadline - performance.now())));
  }
}

/** How often a request in flight looks whether the quorum named another controller (a change also wakes it). */
const IN_FLIGHT_CHECK_MS = 250;

/**
 * channel.send, abandoned ('moved') once the quorum names another node active. A controller cut
 * off by a silent network partition answers nothing until the request times out, while the
 * others elect its successor within an election timeout; waiting for the old one would hold the
 * change for the whole timeout. While the quorum names no controller at all the answer is still
 * awaited: the old one may yet reply.
 */
async function sendWhileActive(channel: ControllerChannel, id: number, request: ControllerRequest, timeoutMs: number): Promise<ControllerReply | 'moved'> {
  let settled = false;
  const sent = channel.send(id, request, timeoutMs).finally(() => {
    settled = true;
  });
  // An abandoned send may still fail later; that failure is nobody's answer any more.
  sent.catch(() => undefined);
  const moved = (async (): Promise<'moved' | null> => {
    const deadline = performance.now() + timeoutMs;
    while (!settled) {
      const active = channel.activeController();
      if (active !== id && active !== -1) return 'moved';
      const left = deadline - performance.now();
      if (left <= 0) return null;
      // Ends as soon as the answer is in: a local controller answers within the same turn, and
      // the 250 ms timer, left armed, was one stray wake-up per heartbeat on an idle single node.
      await channel.controllerChange(Math.min(left, IN_FLIGHT_CHECK_MS), sent);
    }
    return null;
  })();
  return Promise.race([sent, moved.then<ControllerReply | 'moved'>((m) => (m === 'moved' ? m : sent))]);
}

/** Runs a broker's request on the (pure) controller, as the active controller serves it. */
export function runOnController(controller: MetadataController, request: ControllerRequest, nextOffset: number, nowMs: number): Outcome {
  switch (request.kind) {
    case 'registerBroker':
      return controller.registerBroker(request.request, nextOffset, nowMs);
    case 'heartbeat':
      return controller.heartbeat(request.request, nextOffset, nowMs);
    case 'createTopics':
      return controller.createTopics(request.topics, false, nextOffset);
    case 'createPartitions':
      return controller.createPartitions([{ name: request.name, count: request.count, assignment: request.assignment }], false, nextOffset);
    case 'deleteTopics':
      return controller.deleteTopics(request.names, nextOffset);
    case 'allocateProducerIds':
      return controller.allocateProducerIds(request.brokerId, request.brokerEpoch, nextOffset);
    case 'alterPartition':
      return controller.alterPartition(request.request, nextOffset);
    case 'electLeaders':
      return controller.electLeaders(request.electionType, request.partitions, nextOffset);
    case 'alterPartitionReassignments':
      return controller.alterPartitionReassignments(request.topics, nextOffset);
    case 'listPartitionReassignments':
      return controller.listPartitionReassignments(request.topics);
    case 'alterConfigs':
      return controller.alterConfigs(request.request, nextOffset);
    case 'alterScramCredentials':
      return controller.alterScramCredentials(request.request, nextOffset);
    case 'createAcls':
      return controller.createAcls(request.creations, nextOffset);
    case 'deleteAcls':
      return controller.deleteAcls(request.filters, nextOffset);
    case 'alterClientQuotas':
      return controller.alterClientQuotas(request.request, nextOffset);
    case 'unregisterBroker':
      return controller.unregisterBroker(request.brokerId, nextOffset);
  }
}
