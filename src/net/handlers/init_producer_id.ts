// InitProducerId for idempotent producers: a fresh, never-reused producer id with epoch 0 on
// every call (Kafka's behaviour without a transactional id). Transactions are not supported yet,
// so a transactional id is refused instead of half-served.
import { handler, type Wire } from '../handler.js';
import { InitProducerIdApi, type InitProducerIdRequest, type InitProducerIdResponse } from '../../protocol/apis/init_producer_id.js';
import { ErrorCode, KafkaError } from '../../protocol/errors.js';
import type { ProducerIdSource } from '../../coordinator/producer_ids.js';

export interface InitProducerIdDeps {
  readonly producerIds: ProducerIdSource;
}

export const initProducerIdHandler = handler({
  api: InitProducerIdApi,
  async handle(_ctx, req: InitProducerIdRequest, deps: InitProducerIdDeps): Promise<Wire<InitProducerIdResponse>> {
    if (req.transactionalId !== null) {
      return { throttleTimeMs: 0, errorCode: ErrorCode.INVALID_REQUEST, producerId: -1, producerEpoch: -1 };
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
