// The Raft core's messages as the Kafka requests and responses they travel as between
// controllers (KRaft's wire), and back. Pure functions; whichever thread runs the quorum driver.
//
//   vote / voteResponse                      <-> Vote v2 (PreVote flag)
//   beginQuorumEpoch / ...Response           <-> BeginQuorumEpoch v1
//   endQuorumEpoch                           <-> EndQuorumEpoch v1 (PreferredCandidates); its
//                                                response carries nothing the core needs
//   fetch / fetchResponse                    <-> Fetch v17 of `__cluster_metadata` partition 0,
//                                                entries as record batches (entry_batches.ts)
//   fetchSnapshot / fetchSnapshotResponse    <-> FetchSnapshot v1
//
// What the wire does not carry, and where it comes from instead:
// - A request's `to` is the node that receives it (QuorumReceiver.self); Vote and
//   BeginQuorumEpoch name it (VoterId), and a request naming another node is refused.
// - A fetch's `observer` flag: as in KRaft, the receiver decides from its own voter set.
// - Every field of a response Message that echoes its request (`from`/`to` swapped, a vote
//   response's `preVote`, a fetch response's fetchOffset/lastFetchedEpoch). Pairing: Kafka
//   answers the requests of one connection in order and tags each with its correlation id, so
//   the sender keeps each request Message under its correlation id and hands it to
//   messageOfResponse with the response. The receiver keeps each inbound request until the core
//   emits the response Message of the same API addressed to the request's sender (at most one
//   outstanding request per peer and API: the core never has two fetches or two vote requests
//   to one peer in flight) and answers it with responseOf.
// The cluster id travels in each request's ClusterId; a mismatch is refused with
// INCONSISTENT_CLUSTER_ID (errorResponseOf builds that answer). Malformed requests or responses
// throw QuorumWireError (or EntryBatchError for corrupt batches), both KafkaErrors.
import type { BeginQuorumEpochRequest } from '../../protocol/apis/begin_quorum_epoch.js';
import type { EndQuorumEpochRequest } from '../../protocol/apis/end_quorum_epoch.js';
import type { FetchRequest as FetchWireRequest, FetchResponse as FetchWireResponse } from '../../protocol/apis/fetch.js';
import type {
  FetchSnapshotRequest as FetchSnapshotWireRequest,
  FetchSnapshotResponse as FetchSnapshotWireResponse,
} from '../../protocol/apis/fetch_snapshot.js';
import { METADATA_TOPIC_ID, METADATA_TOPIC_NAME, type QuorumEpochResponse } from '../../protocol/apis/quorum_common.js';
import type { VoteRequest as VoteWireRequest, VoteResponse as VoteWireResponse } from '../../protocol/apis/vote.js';
import { ErrorCode, KafkaError } from '../../protocol/errors.js';
import { ZERO_UUID, decodedRecords } from '../../protocol/schema.js';
import { bytesView, decodeEntryBatches, decodeVoters, encodeEntryBatches } from './entry_batches.js';
import type {
  BeginQuorumEpoch, BeginQuorumEpochResponse, EndQuorumEpoch, FetchRequest, FetchResponse, FetchSnapshotRequest,
  FetchSnapshotResponse, Message, NodeId, OffsetAndEpoch, VoteRequest, VoteResponse,
} from './types.js';

/** The API versions the quorum speaks (KIP-853 and KIP-996 levels). */
export const QuorumApiVersion = {
  vote: 2,
  beginQuorumEpoch: 1,
  endQuorumEpoch: 1,
  fetch: 17,
  fetchSnapshot: 1,
} as const;

/** The api keys of the quorum's messages, as literal types so a QuorumRequest or QuorumResponse narrows by key. */
export const QuorumApiKey = {
  fetch: 1,
  vote: 52,
  beginQuorumEpoch: 53,
  endQuorumEpoch: 54,
  fetchSnapshot: 59,
} as const;

/** KRaft's MAX_FETCH_WAIT_MS: what a fetch asks for; the leader's core decides how long it parks. */
const FETCH_MAX_WAIT_MS = 500;
const METADATA_PARTITION = 0;
const NO_OFFSET_EPOCH = { endOffset: -1, epoch: -1 } as const;

export type RequestMessage = VoteRequest | BeginQuorumEpoch | EndQuorumEpoch | FetchRequest | FetchSnapshotRequest;
export type ResponseMessage = VoteResponse | BeginQuorumEpochResponse | FetchResponse | FetchSnapshotResponse;

/** A request as it goes on the wire: which API, at which version, with which body. */
export type QuorumRequest =
  | { readonly apiKey: typeof QuorumApiKey.vote; readonly version: number; readonly body: VoteWireRequest }
  | { readonly apiKey: typeof QuorumApiKey.beginQuorumEpoch; readonly version: number; readonly body: BeginQuorumEpochRequest }
  | { readonly apiKey: typeof QuorumApiKey.endQuorumEpoch; readonly version: number; readonly body: EndQuorumEpochRequest }
  | { readonly apiKey: typeof QuorumApiKey.fetch; readonly version: number; readonly body: FetchWireRequest }
  | { readonly apiKey: typeof QuorumApiKey.fetchSnapshot; readonly version: number; readonly body: FetchSnapshotWireRequest };

/** A response as it goes on the wire; EndQuorumEpoch's shares BeginQuorumEpoch's shape. */
export type QuorumResponse =
  | { readonly apiKey: typeof QuorumApiKey.vote; readonly body: VoteWireResponse }
  | { readonly apiKey: typeof QuorumApiKey.beginQuorumEpoch | typeof QuorumApiKey.endQuorumEpoch; readonly body: QuorumEpochResponse }
  | { readonly apiKey: typeof QuorumApiKey.fetch; readonly body: FetchWireResponse }
  | { readonly apiKey: typeof QuorumApiKey.fetchSnapshot; readonly body: FetchSnapshotWireResponse };

/** What the node receiving a request knows that the request does not say. */
export interface QuorumReceiver {
  readonly self: NodeId;
  readonly clusterId: string;
  /** Whether `id` votes in this node's current voter set (a fetcher not in it is an observer). */
  readonly isVoter: (id: NodeId) => boolean;
}

/** A quorum request or response the mapping refuses; `code` is what to answer a request with. */
export class QuorumWireError extends KafkaError {
  constructor(code: ErrorCode, message: string) {
    super(code, message);
    this.name = 'QuorumWireError';
  }
}

function invalid(message: string): QuorumWireError {
  return new QuorumWireError(ErrorCode.INVALID_REQUEST, message);
}

// ---- requests ----------------------------------------------------------------------------------

/** The Kafka request a request Message travels as. */
export function requestOf(m: RequestMessage, clusterId: string): QuorumRequest {
  switch (m.type) {
    case 'vote':
      return {
        apiKey: QuorumApiKey.vote, version: QuorumApiVersion.vote,
        body: {
          clusterId, voterId: m.to,
          topics: [{
            topicName: METADATA_TOPIC_NAME,
            partitions: [{
              partitionIndex: METADATA_PARTITION, candidateEpoch: m.epoch, candidateId: m.from,
              candidateDirectoryId: ZERO_UUID, voterDirectoryId: ZERO_UUID,
              lastOffsetEpoch: m.lastEpoch, lastOffset: m.lastOffset, preVote: m.preVote,
            }],
          }],
        },
      };
    case 'beginQuorumEpoch':
      return {
        apiKey: QuorumApiKey.beginQuorumEpoch, version: QuorumApiVersion.beginQuorumEpoch,
        body: {
          clusterId, voterId: m.to,
          topics: [{ topicName: METADATA_TOPIC_NAME, partitions: [{ partitionIndex: METADATA_PARTITION, voterDirectoryId: ZERO_UUID, leaderId: m.from, leaderEpoch: m.epoch }] }],
          leaderEndpoints: [],
        },
      };
    case 'endQuorumEpoch':
      return {
        apiKey: QuorumApiKey.endQuorumEpoch, version: QuorumApiVersion.endQuorumEpoch,
        body: {
          clusterId,
          topics: [{
            topicName: METADATA_TOPIC_NAME,
            partitions: [{
              partitionIndex: METADATA_PARTITION, leaderId: m.from, leaderEpoch: m.epoch, preferredSuccessors: [],
              preferredCandidates: m.preferredSuccessors.map((candidateId) => ({ candidateId, candidateDirectoryId: ZERO_UUID })),
            }],
          }],
          leaderEndpoints: [],
        },
      };
    case 'fetch':
      return {
        apiKey: QuorumApiKey.fetch, version: QuorumApiVersion.fetch,
        body: {
          clusterId, replicaId: -1, replicaState: { replicaId: m.from, replicaEpoch: -1 },
          maxWaitMs: FETCH_MAX_WAIT_MS, minBytes: 0, maxBytes: m.maxBytes, isolationLevel: 0, sessionId: 0, sessionEpoch: -1,
          topics: [{
            topic: METADATA_TOPIC_NAME, topicId: METADATA_TOPIC_ID,
            partitions: [{
              partition: METADATA_PARTITION, currentLeaderEpoch: m.epoch, fetchOffset: m.fetchOffset,
              lastFetchedEpoch: m.lastFetchedEpoch, logStartOffset: -1, partitionMaxBytes: m.maxBytes, replicaDirectoryId: ZERO_UUID,
            }],
          }],
          forgottenTopicsData: [], rackId: '',
        },
      };
    case 'fetchSnapshot':
      return {
        apiKey: QuorumApiKey.fetchSnapshot, version: QuorumApiVersion.fetchSnapshot,
        body: {
          clusterId, replicaId: m.from, maxBytes: m.maxBytes,
          topics: [{
            name: METADATA_TOPIC_NAME,
            partitions: [{
              partition: METADATA_PARTITION, currentLeaderEpoch: m.epoch,
              snapshotId: { endOffset: m.snapshotId.endOffset, epoch: m.snapshotId.epoch },
              position: m.position, replicaDirectoryId: ZERO_UUID,
            }],
          }],
        },
      };
  }
}

/** The request Message of a received quorum request; throws QuorumWireError with the code to answer. */
export function messageOfRequest(req: QuorumRequest, receiver: QuorumReceiver): RequestMessage {
  checkClusterId(req.body.clusterId, receiver.clusterId);
  const to = receiver.self;
  switch (req.apiKey) {
    case QuorumApiKey.vote: {
      checkAddressee(req.body.voterId, to);
      const p = onlyPartition(req.body.topics, (t) => t.topicName === METADATA_TOPIC_NAME, (q) => q.partitionIndex);
      return {
        type: 'vote', from: nodeId(p.candidateId), to, epoch: epoch(p.candidateEpoch), preVote: p.preVote,
        lastEpoch: epoch(p.lastOffsetEpoch), lastOffset: offset(p.lastOffset),
      };
    }
    case QuorumApiKey.beginQuorumEpoch: {
      checkAddressee(req.body.voterId, to);
      const p = onlyPartition(req.body.topics, (t) => t.topicName === METADATA_TOPIC_NAME, (q) => q.partitionIndex);
      return { type: 'beginQuorumEpoch', from: nodeId(p.leaderId), to, epoch: epoch(p.leaderEpoch) };
    }
    case QuorumApiKey.endQuorumEpoch: {
      const p = onlyPartition(req.body.topics, (t) => t.topicName === METADATA_TOPIC_NAME, (q) => q.partitionIndex);
      const successors = req.version === 0 ? p.preferredSuccessors : p.preferredCandidates.map((c) => c.candidateId);
      return { type: 'endQuorumEpoch', from: nodeId(p.leaderId), to, epoch: epoch(p.leaderEpoch), preferredSuccessors: successors.map(nodeId) };
    }
    case QuorumApiKey.fetch: {
      const p = onlyPartition(req.body.topics, (t) => t.topicId === METADATA_TOPIC_ID, (q) => q.partition);
      // The fetcher's id moved from the top level into ReplicaState at v15 (KIP-903).
      const from = nodeId(req.version >= 15 ? req.body.replicaState.replicaId : req.body.replicaId);
      return {
        type: 'fetch', from, to, epoch: epoch(p.currentLeaderEpoch), fetchOffset: offset(p.fetchOffset),
        lastFetchedEpoch: epoch(p.lastFetchedEpoch), maxBytes: size(p.partitionMaxBytes), observer: !receiver.isVoter(from),
      };
    }
    case QuorumApiKey.fetchSnapshot: {
      const p = onlyPartition(req.body.topics, (t) => t.name === METADATA_TOPIC_NAME, (q) => q.partition);
      return {
        type: 'fetchSnapshot', from: nodeId(req.body.replicaId), to, epoch: epoch(p.currentLeaderEpoch),
        snapshotId: offsetAndEpoch(p.snapshotId), position: offset(p.position), maxBytes: size(req.body.maxBytes),
      };
    }
  }
}

function checkClusterId(sent: string | null, own: string): void {
  // KRaft accepts a request without a cluster id (peers that predate it); only a different one is refused.
  if (sent !== null && sent !== own) {
    throw new QuorumWireError(ErrorCode.INCONSISTENT_CLUSTER_ID, `request for cluster ${JSON.stringify(sent)} reached cluster ${JSON.stringify(own)}`);
  }
}

function checkAddressee(voterId: number, self: NodeId): void {
  if (voterId !== -1 && voterId !== self) throw invalid(`request for voter ${voterId} reached node ${self}`);
}

/** The one partition of the metadata topic a quorum request or response may name. */
function onlyPartition<T extends { partitions: unknown[] }>(
  topics: readonly T[], isMetadata: (t: T) => boolean, index: (p: T['partitions'][number]) => number,
): T['partitions'][number] {
  const topic = topics[0];
  if (topics.length !== 1 || topic === undefined || !isMetadata(topic)) throw invalid('quorum requests name only the metadata topic');
  const partition = topic.partitions[0];
  if (topic.partitions.length !== 1 || partition === undefined || index(partition) !== METADATA_PARTITION) {
    throw invalid('quorum requests name only partition 0 of the metadata topic');
  }
  return partition;
}

function nodeId(v: number): NodeId {
  if (v < 0) throw invalid(`node id ${v}`);
  return v;
}

function epoch(v: number): number {
  if (v < 0) throw invalid(`epoch ${v}`);
  return v;
}

function offset(v: number): number {
  if (v < 0) throw invalid(`offset ${v}`);
  return v;
}

function size(v: number): number {
  if (v < 0) throw invalid(`byte count ${v}`);
  return v;
}

/** A Buffer view of `bytes` (no copy), as the wire schemas take. */
function bufferOf(bytes: Uint8Array): Buffer {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** A snapshot's VotersRecord, checked here so a bad one is refused with the response (EntryBatchError), not at install. */
function votersRecord(v: Buffer): Uint8Array {
  const record = bytesView(v);
  decodeVoters(record);
  return record;
}

function offsetAndEpoch(v: { endOffset: number; epoch: number }): OffsetAndEpoch {
  return { endOffset: offset(v.endOffset), epoch: epoch(v.epoch) };
}

// ---- responses ---------------------------------------------------------------------------------

/** The Kafka response a response Message travels as. */
export function responseOf(m: ResponseMessage): QuorumResponse {
  switch (m.type) {
    case 'voteResponse':
      return {
        apiKey: QuorumApiKey.vote,
        body: {
          errorCode: ErrorCode.NONE,
          topics: [{ topicName: METADATA_TOPIC_NAME, partitions: [{ partitionIndex: METADATA_PARTITION, errorCode: ErrorCode.NONE, leaderId: m.leaderId, leaderEpoch: m.epoch, voteGranted: m.granted }] }],
          nodeEndpoints: [],
        },
      };
    case 'beginQuorumEpochResponse':
      return { apiKey: QuorumApiKey.beginQuorumEpoch, body: quorumEpochAccepted(m.epoch) };
    case 'fetchResponse':
      return {
        apiKey: QuorumApiKey.fetch,
        body: {
          throttleTimeMs: 0, errorCode: ErrorCode.NONE, sessionId: 0,
          responses: [{
            topic: METADATA_TOPIC_NAME, topicId: METADATA_TOPIC_ID,
            partitions: [{
              partitionIndex: METADATA_PARTITION, errorCode: m.errorCode, highWatermark: m.highWatermark,
              lastStableOffset: m.highWatermark, logStartOffset: -1,
              divergingEpoch: m.divergingEpoch ?? NO_OFFSET_EPOCH,
              currentLeader: { leaderId: m.leaderId, leaderEpoch: m.epoch },
              snapshotId: m.snapshotId ?? NO_OFFSET_EPOCH,
              abortedTransactions: null, preferredReadReplica: -1,
              records: encodeEntryBatches(m.entries, { leaderId: m.from }),
            }],
          }],
          nodeEndpoints: [],
        },
      };
    case 'fetchSnapshotResponse':
      return {
        apiKey: QuorumApiKey.fetchSnapshot,
        body: {
          throttleTimeMs: 0, errorCode: ErrorCode.NONE,
          topics: [{
            name: METADATA_TOPIC_NAME,
            partitions: [{
              index: METADATA_PARTITION, errorCode: m.errorCode,
              snapshotId: m.snapshot === null ? NO_OFFSET_EPOCH : { endOffset: m.snapshot.id.endOffset, epoch: m.snapshot.id.epoch },
              currentLeader: { leaderId: m.leaderId, leaderEpoch: m.epoch },
              size: m.snapshot === null ? -1 : m.snapshot.size,
              position: m.position,
              unalignedRecords: bufferOf(m.bytes),
              sluiceVotersRecord: m.snapshot === null ? Buffer.alloc(0) : bufferOf(m.snapshot.votersRecord),
            }],
          }],
          nodeEndpoints: [],
        },
      };
  }
}

/** The answer to an EndQuorumEpoch the receiver accepted (the core sends no response Message for it). */
export function endQuorumEpochAnswer(m: EndQuorumEpoch): QuorumResponse {
  return { apiKey: QuorumApiKey.endQuorumEpoch, body: quorumEpochAccepted(m.epoch) };
}

/** BeginQuorumEpoch's or EndQuorumEpoch's success answer: the responder is at `epoch`. */
function quorumEpochAccepted(epoch: number): QuorumEpochResponse {
  return {
    errorCode: ErrorCode.NONE,
    topics: [{ topicName: METADATA_TOPIC_NAME, partitions: [{ partitionIndex: METADATA_PARTITION, errorCode: ErrorCode.NONE, leaderId: -1, leaderEpoch: epoch }] }],
    nodeEndpoints: [],
  };
}

/** The answer to a quorum request refused as a whole (error in the top-level ErrorCode). */
export function errorResponseOf(apiKey: QuorumRequest['apiKey'], errorCode: ErrorCode): QuorumResponse {
  switch (apiKey) {
    case QuorumApiKey.vote: return { apiKey, body: { errorCode, topics: [], nodeEndpoints: [] } };
    case QuorumApiKey.beginQuorumEpoch:
    case QuorumApiKey.endQuorumEpoch: return { apiKey, body: { errorCode, topics: [], nodeEndpoints: [] } };
    case QuorumApiKey.fetch: return { apiKey, body: { throttleTimeMs: 0, errorCode, sessionId: 0, responses: [], nodeEndpoints: [] } };
    case QuorumApiKey.fetchSnapshot: return { apiKey, body: { throttleTimeMs: 0, errorCode, topics: [], nodeEndpoints: [] } };
  }
}

/**
 * The response Message answering `request` (which this node sent), or null for EndQuorumEpoch,
 * whose answer the core does not wait for. Throws QuorumWireError when the responder refused the
 * request as a whole (INCONSISTENT_CLUSTER_ID, INVALID_REQUEST, ...) or the response does not fit it.
 */
export function messageOfResponse(request: RequestMessage, res: QuorumResponse): ResponseMessage | null {
  if (res.body.errorCode !== ErrorCode.NONE) {
    throw new QuorumWireError(res.body.errorCode as ErrorCode, `node ${request.to} refused ${request.type}: error ${res.body.errorCode}`);
  }
  const from = request.to;
  const to = request.from;
  if (request.type === 'vote' && res.apiKey === QuorumApiKey.vote) {
    const p = onePartition(res.body.topics);
    return { type: 'voteResponse', from, to, epoch: epoch(p.leaderEpoch), preVote: request.preVote, granted: p.voteGranted, leaderId: leaderHint(p.leaderId) };
  }
  if (request.type === 'beginQuorumEpoch' && res.apiKey === QuorumApiKey.beginQuorumEpoch) {
    const p = onePartition(res.body.topics);
    return { type: 'beginQuorumEpochResponse', from, to, epoch: epoch(p.leaderEpoch) };
  }
  if (request.type === 'endQuorumEpoch' && res.apiKey === QuorumApiKey.endQuorumEpoch) return null;
  if (request.type === 'fetch' && res.apiKey === QuorumApiKey.fetch) {
    const p = onePartition(res.body.responses);
    return {
      type: 'fetchResponse', from, to, epoch: epoch(p.currentLeader.leaderEpoch), errorCode: p.errorCode,
      leaderId: leaderHint(p.currentLeader.leaderId), fetchOffset: request.fetchOffset, lastFetchedEpoch: request.lastFetchedEpoch,
      entries: decodeEntryBatches(decodedRecords(p.records)), highWatermark: offset(p.highWatermark),
      divergingEpoch: optionalOffsetAndEpoch(p.divergingEpoch), snapshotId: optionalOffsetAndEpoch(p.snapshotId),
    };
  }
  if (request.type === 'fetchSnapshot' && res.apiKey === QuorumApiKey.fetchSnapshot) {
    const p = onePartition(res.body.topics);
    const id = optionalOffsetAndEpoch(p.snapshotId);
    return {
      type: 'fetchSnapshotResponse', from, to, epoch: epoch(p.currentLeader.leaderEpoch), errorCode: p.errorCode,
      leaderId: leaderHint(p.currentLeader.leaderId),
      snapshot: id === null ? null : { id, votersRecord: votersRecord(p.sluiceVotersRecord), size: size(p.size) },
      position: offset(p.position), bytes: bytesView(p.unalignedRecords),
    };
  }
  throw invalid(`a response of api ${res.apiKey} does not answer ${request.type}`);
}

/** The single partition a quorum response answers for. */
function onePartition<P>(topics: readonly { partitions: P[] }[]): P {
  const partition = topics[0]?.partitions[0];
  if (topics.length !== 1 || topics[0]?.partitions.length !== 1 || partition === undefined) {
    throw invalid('a quorum response answers for exactly one partition');
  }
  return partition;
}

function leaderHint(v: number): NodeId {
  if (v < -1) throw invalid(`leader id ${v}`);
  return v;
}

function optionalOffsetAndEpoch(v: { endOffset: number; epoch: number }): OffsetAndEpoch | null {
  return v.endOffset === -1 && v.epoch === -1 ? null : offsetAndEpoch(v);
}

/** Whether a Message is a request (the other side answers it) or a response. */
export function isRequestMessage(m: Message): m is RequestMessage {
  return m.type === 'vote' || m.type === 'beginQuorumEpoch' || m.type === 'endQuorumEpoch' || m.type === 'fetch' || m.type === 'fetchSnapshot';
}
