// CreatePartitions: grows a topic's partition count through the topic front end, which places
// the new partitions' replicas (or checks the client's assignment against the live brokers)
// and answers once they are usable (or REQUEST_TIMED_OUT after the request's timeout).
import type { TopicAdmin } from '../../cluster/topic_admin.js';
import { AclOperation } from '../../coordinator/acl/acl.js';
import { permitsTopic } from '../acl_authority.js';
import { handler, type Wire } from '../handler.js';
import { CreatePartitionsApi, type CreatePartitionsRequest, type CreatePartitionsResponse } from '../../protocol/apis/create_partitions.js';
import { ErrorCode, KafkaError } from '../../protocol/errors.js';

type Out = Wire<CreatePartitionsResponse['results'][number]>;

export interface CreatePartitionsDeps {
  readonly topics: Pick<TopicAdmin, 'addPartitions'>;
}

export const createPartitionsHandler = handler({
  api: CreatePartitionsApi,
  barrier: true,
  async handle(ctx, req: CreatePartitionsRequest, deps: CreatePartitionsDeps): Promise<Wire<CreatePartitionsResponse>> {
    const results: Out[] = [];
    for (const t of req.topics) {
      if (!permitsTopic(ctx.authorizer, AclOperation.ALTER, t.name)) {
        results.push({ name: t.name, errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED, errorMessage: `not authorized to alter topic '${t.name}'` });
        continue;
      }
      try {
        await deps.topics.addPartitions(t.name, t.count, t.assignments?.map((a) => a.brokerIds) ?? null, req.validateOnly, req.timeoutMs);
        results.push({ name: t.name, errorCode: 0, errorMessage: null });
      } catch (err) {
        if (!(err instanceof KafkaError)) throw err;
        results.push({ name: t.name, errorCode: err.code, errorMessage: err.message });
      }
    }
    return { throttleTimeMs: 0, results };
  },
});
