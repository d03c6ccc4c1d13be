// CreatePartitions: grows a topic's partition count; manual assignments may only name this node.
import { handler, type Wire } from '../handler.js';
import { CreatePartitionsApi, type CreatePartitionsRequest, type CreatePartitionsResponse } from '../../protocol/apis/create_partitions.js';
import { ErrorCode, KafkaError } from '../../protocol/errors.js';

type Out = Wire<CreatePartitionsResponse['results'][number]>;

export const createPartitionsHandler = handler({
  api: CreatePartitionsApi,
  barrier: true,
  async handle(ctx, req: CreatePartitionsRequest): Promise<Wire<CreatePartitionsResponse>> {
    const b = ctx.broker;
    const results: Out[] = [];
    for (const t of req.topics) {
      try {
        if (t.assignments !== null && t.assignments.some((a) => a.brokerIds.length !== 1 || a.brokerIds[0] !== b.nodeId)) {
          throw new KafkaError(ErrorCode.INVALID_REPLICA_ASSIGNMENT, `replicas must be exactly [${b.nodeId}] on a single node`);
        }
        await b.topics.addPartitions(t.name, t.count, req.validateOnly);
        results.push({ name: t.name, errorCode: 0, errorMessage: null });
      } catch (err) {
        if (!(err instanceof KafkaError)) throw err;
        results.push({ name: t.name, errorCode: err.code, errorMessage: err.message });
      }
    }
    return { throttleTimeMs: 0, results };
  },
});
