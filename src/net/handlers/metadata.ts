// Metadata: the live brokers, the controller and topics (by name or id) as the cluster view has
// them, with auto-creation when the request and the broker allow it. Topics are created before
// answering, so a client's first Metadata for a new topic already sees its partitions.
// A partition this broker leads but has not opened yet is answered LEADER_NOT_AVAILABLE.
import { isInternalTopic, offlineReplicas, type BrokerEndpoint, type ClusterView, type TopicImage } from '../../cluster/cluster_view.js';
import type { TopicAdmin } from '../../cluster/topic_admin.js';
import type { PartitionLookup } from '../../actors/partition_reconciler.js';
import { handler, type HandlerContext, type Wire } from '../handler.js';
import { MetadataApi, type MetadataRequest, type MetadataResponse } from '../../protocol/apis/metadata.js';
import { ErrorCode, KafkaError } from '../../protocol/errors.js';

type TopicOut = Wire<MetadataResponse['topics'][number]>;

export interface MetadataDeps {
  readonly cluster: ClusterView;
  readonly partitions: PartitionLookup;
  readonly topics: Pick<TopicAdmin, 'ensure'>;
  readonly autoCreateTopics: boolean;
}

function partitionsOf(deps: MetadataDeps, live: readonly BrokerEndpoint[], t: TopicImage): TopicOut['partitions'] {
  const { cluster, partitions } = deps;
  const out: TopicOut['partitions'] = [];
  for (let p = 0; p < t.partitions; p++) {
    const rec = cluster.partition(t.name, p);
    if (rec === undefined) continue;
    // Only this broker's own partitions can be seen to be open.
    const serving = rec.leader >= 0 && (rec.leader !== cluster.localId || partitions.handleOf(t.name, p) >= 0);
    out.push({
      errorCode: serving ? ErrorCode.NONE : ErrorCode.LEADER_NOT_AVAILABLE,
      partitionIndex: p,
      leaderId: serving ? rec.leader : -1,
      leaderEpoch: rec.leaderEpoch,
      replicaNodes: [...rec.replicas],
      isrNodes: [...rec.isr],
      offlineReplicas: offlineReplicas(rec, live),
    });
  }
  return out;
}

function topicOut(deps: MetadataDeps, live: readonly BrokerEndpoint[], t: TopicImage): TopicOut {
  return { errorCode: 0, name: t.name, topicId: t.id, isInternal: isInternalTopic(t.name), partitions: partitionsOf(deps, live, t) };
}

function topicError(name: string | null, topicId: string, code: number): TopicOut {
  return { errorCode: code, name, topicId, isInternal: false, partitions: [] };
}

async function lookup(ctx: HandlerContext, req: MetadataRequest, deps: MetadataDeps, name: string | null, topicId: string): Promise<TopicOut> {
  const live = deps.cluster.brokers();
  if (name === null) {
    const byId = deps.cluster.topicById(topicId);
    // A response's topic name is nullable only from v12; v10-11 requests may already name a topic by id alone.
    return byId ? topicOut(deps, live, byId) : topicError(ctx.version >= 12 ? null : '', topicId, ErrorCode.UNKNOWN_TOPIC_ID);
  }
  const existing = deps.cluster.topic(name);
  if (existing) return topicOut(deps, live, existing);
  const allow = deps.autoCreateTopics && (ctx.version < 4 || req.allowAutoTopicCreation);
  if (!allow) return topicError(name, topicId, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  try {
    const created = await deps.topics.ensure(name);
    return topicOut(deps, live, created);
  } catch (err) {
    if (err instanceof KafkaError) return topicError(name, topicId, err.code);
    throw err;
  }
}

export const metadataHandler = handler({
  api: MetadataApi,
  async handle(ctx, req: MetadataRequest, deps: MetadataDeps): Promise<Wire<MetadataResponse>> {
    const { cluster } = deps;
    const all = req.topics === null || (ctx.version === 0 && req.topics.length === 0);
    const live = cluster.brokers();
    const topics = all
      ? [...cluster.topics()].map((t) => topicOut(deps, live, t))
      : await Promise.all(req.topics!.map((t) => lookup(ctx, req, deps, t.name, t.topicId)));
    return {
      throttleTimeMs: 0,
      brokers: cluster.brokers().map((b) => ({ nodeId: b.id, host: b.host, port: b.port, rack: b.rack })),
      clusterId: cluster.clusterId,
      controllerId: cluster.controllerId(),
      topics,
    };
  },
});
