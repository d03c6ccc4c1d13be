// DeleteTopics: by name (v0-5) or by name or id (v6+); removes the topic, closes its actors and
// deletes their data (through the topic front end and the partition reconciler) before answering,
// or answers REQUEST_TIMED_OUT when that takes longer than the request's timeout.
import type { ClusterView } from '../../cluster/cluster_view.js';
import type { TopicAdmin } from '../../cluster/topic_admin.js';
import { AclOperation } from '../../coordinator/acl/acl.js';
import { permitsTopic } from '../acl_authority.js';
import { handler, type Wire } from '../handler.js';
import { DeleteTopicsApi, type DeleteTopicsRequest, type DeleteTopicsResponse } from '../../protocol/apis/delete_topics.js';
import { ErrorCode, KafkaError } from '../../protocol/errors.js';

type Out = Wire<DeleteTopicsResponse['responses'][number]>;
const ZERO_ID = '0'.repeat(32);

export interface DeleteTopicsDeps {
  readonly cluster: ClusterView;
  readonly topics: Pick<TopicAdmin, 'delete'>;
}

export const deleteTopicsHandler = handler({
  api: DeleteTopicsApi,
  barrier: true,
  async handle(ctx, req: DeleteTopicsRequest, deps: DeleteTopicsDeps): Promise<Wire<DeleteTopicsResponse>> {
    const asked = ctx.version >= 6 ? req.topics.map((t) => ({ name: t.name, topicId: t.topicId })) : req.topicNames.map((name) => ({ name, topicId: ZERO_ID }));
    const responses: Out[] = [];
    for (const a of asked) {
      const name = a.name ?? deps.cluster.topicById(a.topicId)?.name ?? null;
      if (name === null) {
        responses.push({ name: null, topicId: a.topicId, errorCode: ErrorCode.UNKNOWN_TOPIC_ID, errorMessage: 'unknown topic id' });
        continue;
      }
      if (!permitsTopic(ctx.authorizer, AclOperation.DELETE, name)) {
        responses.push({ name: a.name, topicId: a.topicId, errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED, errorMessage: `not authorized to delete topic '${name}'` });
        continue;
      }
      try {
        const t = await deps.topics.delete(name, req.timeoutMs);
        responses.push({ name, topicId: t.id, errorCode: 0, errorMessage: null });
      } catch (err) {
        if (!(err instanceof KafkaError)) throw err;
        responses.push({ name, topicId: a.topicId, errorCode: err.code, errorMessage: err.message });
      }
    }
    return { throttleTimeMs: 0, responses };
  },
});
