// CreateTopics: checks the request's own shape (duplicates, assignments given together with a
// count or factor, assignment partition indexes), then hands each topic to the topic front end,
// which validates names, counts, replication factor against the live brokers, assignments and
// configs, and answers once the partitions are usable, or REQUEST_TIMED_OUT when that takes
// longer than the request's timeout; answers per topic.
import type { TopicAdmin } from '../../cluster/topic_admin.js';
import type { BrokerConfig } from '../../config.js';
import { describeTopicConfigs } from '../../coordinator/topic_configs.js';
import { AclOperation } from '../../coordinator/acl/acl.js';
import { permitsCluster, permitsTopic } from '../acl_authority.js';
import { handler, type Wire } from '../handler.js';
import { CreateTopicsApi, type CreateTopicsRequest, type CreateTopicsResponse } from '../../protocol/apis/create_topics.js';
import { ErrorCode, KafkaError } from '../../protocol/errors.js';

type TopicIn = CreateTopicsRequest['topics'][number];
type TopicOut = Wire<CreateTopicsResponse['topics'][number]>;

export interface CreateTopicsDeps {
  readonly topics: Pick<TopicAdmin, 'create'>;
  /** For the created topics' effective configs. */
  readonly config: BrokerConfig;
}

/** The client's replica lists by partition index, which must run 0..n-1 with no gaps. */
function assignmentOf(t: TopicIn): number[][] {
  const byIndex = new Map(t.assignments.map((a) => [a.partitionIndex, a.brokerIds]));
  const lists: number[][] = [];
  for (let p = 0; p < t.assignments.length; p++) {
    const replicas = byIndex.get(p);
    if (replicas === undefined) throw new KafkaError(ErrorCode.INVALID_REPLICA_ASSIGNMENT, `assigned partitions must be numbered 0 to ${t.assignments.length - 1}`);
    lists.push(replicas);
  }
  return lists;
}

async function createOne(deps: CreateTopicsDeps, t: TopicIn, req: CreateTopicsRequest, duplicate: boolean, mayCreate: boolean): Promise<TopicOut> {
  const fail = (code: number, message: string): TopicOut =>
    ({ name: t.name, topicId: '0'.repeat(32), errorCode: code, errorMessage: message, numPartitions: -1, replicationFactor: -1, configs: null });
  if (duplicate) return fail(ErrorCode.INVALID_REQUEST, `topic '${t.name}' appears more than once in the request`);
  if (!mayCreate) return fail(ErrorCode.TOPIC_AUTHORIZATION_FAILED, `not authorized to create topic '${t.name}'`);
  const assigned = t.assignments.length > 0;
  if (assigned && (t.numPartitions !== -1 || t.replicationFactor !== -1)) {
    return fail(ErrorCode.INVALID_REQUEST, 'both assignments and partition count/replication factor were given');
  }
  const configs: Record<string, string> = {};
  for (const c of t.configs) if (c.value !== null) configs[c.name] = c.value;
  try {
    const assignment = assigned ? assignmentOf(t) : null;
    const created = await deps.topics.create({ name: t.name, partitions: t.numPartitions, replicationFactor: t.replicationFactor, assignment, configs }, req.validateOnly, req.timeoutMs);
    return {
      name: t.name,
      topicId: created.topic.id,
      errorCode: 0,
      errorMessage: null,
      numPartitions: created.topic.partitions,
      replicationFactor: created.replicationFactor,
      configs: describeTopicConfigs(configs, deps.config).map((c) => ({
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
  async handle(ctx, req: CreateTopicsRequest, deps: CreateTopicsDeps): Promise<Wire<CreateTopicsResponse>> {
    const counts = new Map<string, number>();
    for (const t of req.topics) counts.set(t.name, (counts.get(t.name) ?? 0) + 1);
    const topics: TopicOut[] = [];
    // One at a time: creation order is the order the client asked for, and errors stay per topic.
    // CREATE on the cluster covers every topic; otherwise each needs CREATE on itself (Kafka's rule).
    const onCluster = permitsCluster(ctx.authorizer, AclOperation.CREATE);
    for (const t of req.topics) {
      const mayCreate = onCluster || permitsTopic(ctx.authorizer, AclOperation.CREATE, t.name);
      topics.push(await createOne(deps, t, req, counts.get(t.name)! > 1, mayCreate));
    }
    return { throttleTimeMs: 0, topics };
  },
});
