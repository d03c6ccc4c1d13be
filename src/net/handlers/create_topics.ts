// CreateTopics: validates names, counts, replication factor (1 on a single node), manual
// assignments (only this node) and configs, then creates each topic; answers per topic.
import { describeTopicConfigs } from '../../coordinator/topic_configs.js';
import type { BrokerContext } from '../broker_context.js';
import { handler, type Wire } from '../handler.js';
import { CreateTopicsApi, type CreateTopicsRequest, type CreateTopicsResponse } from '../../protocol/apis/create_topics.js';
import { ErrorCode, KafkaError } from '../../protocol/errors.js';

type TopicIn = CreateTopicsRequest['topics'][number];
type TopicOut = Wire<CreateTopicsResponse['topics'][number]>;

async function createOne(b: BrokerContext, t: TopicIn, validateOnly: boolean, duplicate: boolean): Promise<TopicOut> {
  const fail = (code: number, message: string): TopicOut =>
    ({ name: t.name, topicId: '0'.repeat(32), errorCode: code, errorMessage: message, numPartitions: -1, replicationFactor: -1, configs: null });
  if (duplicate) return fail(ErrorCode.INVALID_REQUEST, `topic '${t.name}' appears more than once in the request`);
  const assigned = t.assignments.length > 0;
  if (assigned && (t.numPartitions !== -1 || t.replicationFactor !== -1)) {
    return fail(ErrorCode.INVALID_REQUEST, 'both assignments and partition count/replication factor were given');
  }
  if (assigned && t.assignments.some((a) => a.brokerIds.length !== 1 || a.brokerIds[0] !== b.nodeId)) {
    return fail(ErrorCode.INVALID_REPLICA_ASSIGNMENT, `replicas must be exactly [${b.nodeId}] on a single node`);
  }
  const partitions = assigned ? t.assignments.length : t.numPartitions === -1 ? b.config.numPartitions : t.numPartitions;
  const rf = assigned ? 1 : t.replicationFactor === -1 ? b.config.defaultReplicationFactor : t.replicationFactor;
  const configs: Record<string, string> = {};
  for (const c of t.configs) if (c.value !== null) configs[c.name] = c.value;
  try {
    const created = await b.topics.create(t.name, partitions, rf, configs, validateOnly);
    return {
      name: t.name,
      topicId: created.id,
      errorCode: 0,
      errorMessage: null,
      numPartitions: partitions,
      replicationFactor: rf,
      configs: describeTopicConfigs(configs, b.config).map((c) => ({
        name: c.name,
        value: c.value,
        readOnly: c.readOnly,
        configSource: c.source,
        isSensitive: false,
      })),
    };
  } catch (err) {
    if (err instanceof KafkaError) return fail(err.code, err.message);
    throw err;
  }
}

export const createTopicsHandler = handler({
  api: CreateTopicsApi,
  barrier: true,
  async handle(ctx, req: CreateTopicsRequest): Promise<Wire<CreateTopicsResponse>> {
    const counts = new Map<string, number>();
    for (const t of req.topics) counts.set(t.name, (counts.get(t.name) ?? 0) + 1);
    const topics: TopicOut[] = [];
    // One at a time: creation order is the order the client asked for, and errors stay per topic.
    for (const t of req.topics) topics.push(await createOne(ctx.broker, t, req.validateOnly, counts.get(t.name)! > 1));
    return { throttleTimeMs: 0, topics };
  },
});
