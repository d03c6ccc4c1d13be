// The table of request handlers by API key. Every API the codec defines has a handler here,
// which is what ApiVersions advertises.
import type { Handler } from '../handler.js';
import { apiVersionsHandler } from './api_versions.js';
import { createPartitionsHandler } from './create_partitions.js';
import { createTopicsHandler } from './create_topics.js';
import { deleteTopicsHandler } from './delete_topics.js';
import { describeClusterHandler } from './describe_cluster.js';
import { describeConfigsHandler } from './describe_configs.js';
import { fetchHandler } from './fetch.js';
import { findCoordinatorHandler } from './find_coordinator.js';
import { initProducerIdHandler } from './init_producer_id.js';
import { listOffsetsHandler } from './list_offsets.js';
import { metadataHandler } from './metadata.js';
import { produceHandler } from './produce.js';

export const handlersByKey: ReadonlyMap<number, Handler<unknown, unknown>> = new Map(
  [
    apiVersionsHandler,
    metadataHandler,
    produceHandler,
    fetchHandler,
    listOffsetsHandler,
    createTopicsHandler,
    deleteTopicsHandler,
    createPartitionsHandler,
    initProducerIdHandler,
    describeConfigsHandler,
    describeClusterHandler,
    findCoordinatorHandler,
  ].map((h) => [h.api.key, h]),
);
