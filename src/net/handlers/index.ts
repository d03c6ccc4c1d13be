// The table of request handlers by API key. Every API the codec defines has a handler here,
// which is what ApiVersions advertises.
import type { Handler } from '../handler.js';
import { apiVersionsHandler } from './api_versions.js';
import { consumerGroupDescribeHandler } from './consumer_group_describe.js';
import { consumerGroupHeartbeatHandler } from './consumer_group_heartbeat.js';
import { deleteGroupsHandler } from './delete_groups.js';
import { describeGroupsHandler } from './describe_groups.js';
import { heartbeatHandler } from './heartbeat.js';
import { joinGroupHandler } from './join_group.js';
import { leaveGroupHandler } from './leave_group.js';
import { listGroupsHandler } from './list_groups.js';
import { offsetCommitHandler } from './offset_commit.js';
import { offsetDeleteHandler } from './offset_delete.js';
import { offsetFetchHandler } from './offset_fetch.js';
import { syncGroupHandler } from './sync_group.js';
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
    joinGroupHandler,
    syncGroupHandler,
    heartbeatHandler,
    leaveGroupHandler,
    offsetCommitHandler,
    offsetFetchHandler,
    listGroupsHandler,
    describeGroupsHandler,
    deleteGroupsHandler,
    offsetDeleteHandler,
    consumerGroupHeartbeatHandler,
    consumerGroupDescribeHandler,
  ].map((h) => [h.api.key, h]),
);
