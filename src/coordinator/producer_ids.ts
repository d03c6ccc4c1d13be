// Where idempotent producer ids come from (InitProducerId). Pure type; main thread.

/**
 * Ids are unique across the cluster's life: the metadata quorum's controller hands out blocks
 * (cluster/controller_producer_ids.ts), each recorded in the metadata log before it is used.
 */
export interface ProducerIdSource {
  allocate(): Promise<number>;
}
