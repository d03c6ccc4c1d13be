// Metadata: this node as the only broker, leader and controller; topics by name or id, with
// auto-creation when the request and the broker allow it. Topics are created before answering,
// so a client's first Metadata for a new topic already sees its partitions.
import { isInternalTopic } from '../../actors/topic_manager.js';
import type { TopicRecord } from '../../coordinator/topic_table.js';
import type { BrokerContext } from '../broker_context.js';
import { handler, type HandlerContext, type Wire } from '../handler.js';
import { MetadataApi, type MetadataRequest, type MetadataResponse } from '../../protocol/apis/metadata.js';
import { ErrorCode, KafkaError } from '../../protocol/errors.js';

type TopicOut = Wire<MetadataResponse['topics'][number]>;

export function partitionsOf(b: BrokerContext, t: TopicRecord): TopicOut['partitions'] {
  const out: TopicOut['partitions'] = [];
  for (let p = 0; p < t.partitions; p++) {
    const open = b.topics.handle(t.name, p) >= 0;
    out.push({
      errorCode: open ? 0 : ErrorCode.LEADER_NOT_AVAILABLE,
      partitionIndex: p,
      leaderId: open ? b.nodeId : -1,
      leaderEpoch: 0,
      replicaNodes: [b.nodeId],
      isrNodes: [b.nodeId],
      offlineReplicas: [],
    });
  }
  return out;
}

function topicOut(b: BrokerContext, t: TopicRecord): TopicOut {
  return { errorCode: 0, name: t.name, topicId: t.id, isInternal: isInternalTopic(t.name), partitions: partitionsOf(b, t) };
}

function topicError(name: string | null, topicId: string, code: number): TopicOut {
  return { errorCode: code, name, topicId, isInternal: false, partitions: [] };
}

async function lookup(ctx: HandlerContext, req: MetadataRequest, name: string | null, topicId: string): Promise<TopicOut> {
  const b = ctx.broker;
  if (name === null) {
    const byId = b.topics.table.getById(topicId);
    return byId ? topicOut(b, byId) : topicError(null, topicId, ErrorCode.UNKNOWN_TOPIC_ID);
  }
  const existing = b.topics.table.get(name);
  if (existing) return topicOut(b, existing);
  const allow = b.config.autoCreateTopics && (ctx.version < 4 || req.allowAutoTopicCreation);
  if (!allow) return topicError(name, topicId, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  try {
    return topicOut(b, await b.topics.ensure(name));
  } catch (err) {
    if (err instanceof KafkaError) return topicError(name, topicId, err.code);
    throw err;
  }
}

export const metadataHandler = handler({
  api: MetadataApi,
  async handle(ctx, req: MetadataRequest): Promise<Wire<MetadataResponse>> {
    const b = ctx.broker;
    const all = req.topics === null || (ctx.version === 0 && req.topics.length === 0);
    const topics = all
      ? [...b.topics.table.all()].map((t) => topicOut(b, t))
      : await Promise.all(req.topics!.map((t) => lookup(ctx, req, t.name, t.topicId)));
    return {
      throttleTimeMs: 0,
      brokers: [{ nodeId: b.nodeId, host: b.advertisedHost, port: b.advertisedPort, rack: null }],
      clusterId: b.clusterId,
      controllerId: b.nodeId,
      topics,
    };
  },
});
