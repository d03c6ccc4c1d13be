// InitProducerId for the idempotent producer: asks any broker for a fresh producer id (Kafka
// allocates one per call when there is no transactional id), retrying coordinator-loading and
// network errors with full-jitter backoff until a deadline. Runs on the producer's thread.

import { setTimeout as sleep } from 'node:timers/promises';
import { InitProducerIdApi } from '../../protocol/apis/init_producer_id.js';
import { ErrorCode, KafkaError } from '../../protocol/errors.js';
import { fullJitterDelay } from '../../protocol/backoff.js';
import type { BackoffOptions } from '../../protocol/backoff.js';
import { brokerError } from '../broker_errors.js';
import type { Cluster } from '../cluster.js';
import { ConnectionError } from '../connection.js';

export interface ProducerIdAndEpoch {
  readonly producerId: number;
  readonly producerEpoch: number;
}

const RETRIABLE: ReadonlySet<number> = new Set([
  ErrorCode.COORDINATOR_NOT_AVAILABLE, ErrorCode.NOT_COORDINATOR, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
  ErrorCode.REQUEST_TIMED_OUT, ErrorCode.NOT_ENOUGH_REPLICAS,
]);

/** Java sends this for idempotence without transactions; the broker ignores it then. */
const NO_TRANSACTION_TIMEOUT_MS = 0x7fffffff;

function retriable(err: unknown): boolean {
  return err instanceof ConnectionError || (err instanceof KafkaError && RETRIABLE.has(err.code));
}

async function attempt(cluster: Cluster): Promise<ProducerIdAndEpoch> {
  const conn = await cluster.anyConnection();
  const res = await conn.request(InitProducerIdApi, {
    transactionalId: null, transactionTimeoutMs: NO_TRANSACTION_TIMEOUT_MS, producerId: -1, producerEpoch: -1,
  });
  if (res.errorCode !== ErrorCode.NONE) throw brokerError(res.errorCode, 'InitProducerId', null);
  return { producerId: res.producerId, producerEpoch: res.producerEpoch };
}

/** A new producer id and epoch; rejects with the last error once `timeoutMs` has passed. */
export async function initProducerId(cluster: Cluster, timeoutMs: number, backoff: BackoffOptions): Promise<ProducerIdAndEpoch> {
  const deadline = Date.now() + timeoutMs;
  for (let n = 0; ; n++) {
    try {
      return await attempt(cluster);
    } catch (err) {
      const delay = fullJitterDelay(n, backoff);
      if (!retriable(err) || Date.now() + delay >= deadline) throw err;
      await sleep(delay);
    }
  }
}
