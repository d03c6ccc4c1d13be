// InitProducerId for idempotent producers: a fresh, never-reused producer id with epoch 0 on
// every call (Kafka's behaviour without a transactional id). Transactions are not supported yet,
// so a transactional id is refused instead of half-served.
import { AclOperation, ResourceType } from '../../coordinator/acl/acl.js';
import { permitsCluster } from '../acl_authority.js';
import { handler, type Wire } from '../handler.js';
import { InitProducerIdApi, type InitProducerIdRequest, type InitProducerIdResponse } from '../../protocol/apis/init_producer_id.js';
import { ErrorCode, KafkaError } from '../../protocol/errors.js';
import type { ProducerIdSource } from '../../coordinator/producer_ids.js';

export interface InitProducerIdDeps {
  readonly producerIds: ProducerIdSource;
}

export const initProducerIdHandler = handler({
  api: InitProducerIdApi,
  async handle(ctx, req: InitProducerIdRequest, deps: InitProducerIdDeps): Promise<Wire<InitProducerIdResponse>> {
    if (req.transactionalId !== null) {
      return { throttleTimeMs: 0, errorCode: ErrorCode.INVALID_REQUEST, producerId: -1, producerEpoch: -1 };
    }
    // An idempotent producer needs IDEMPOTENT_WRITE on the cluster, or (as Kafka 3) WRITE on some topic.
    const authorizer = ctx.authorizer;
    if (!permitsCluster(authorizer, AclOperation.IDEMPOTENT_WRITE) && !(authorizer?.allowsAny(AclOperation.WRITE, ResourceType.TOPIC) ?? true)) {
      return { throttleTimeMs: 0, errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, producerId: -1, producerEpoch: -1 };
    }
    try {
      return { throttleTimeMs: 0, errorCode: 0, producerId: await deps.producerIds.allocate(), producerEpoch: 0 };
    } catch (err) {
      // In a quorum the ids come from the controller, which may be unreachable for a while.
      if (!(err instanceof KafkaError)) throw err;
      return { throttleTimeMs: 0, errorCode: err.code, producerId: -1, producerEpoch: -1 };
    }
  },
});
