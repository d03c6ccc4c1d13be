// The table of request handlers by API key, each bound to the dependencies it declares. Every
// API ApiVersions advertises (advertisedApis in protocol/apis/index.ts) has a handler here.
import type { GroupCalls } from '../../actors/group_directory.js';
import type { PartitionLookup } from '../../actors/partition_reconciler.js';
import type { PartitionRouter } from '../../actors/partition_router.js';
import type { ClusterView } from '../../cluster/cluster_view.js';
import type { TopicAdmin } from '../../cluster/topic_admin.js';
import type { BrokerConfig } from '../../config.js';
import type { ProducerIdSource } from '../../coordinator/producer_ids.js';
import type { BrokerMetrics } from '../../metrics/metrics.js';
import { DescribeQuorumApi } from '../../protocol/apis/describe_quorum.js';
import { ElectLeadersApi } from '../../protocol/apis/elect_leaders.js';
import { UnregisterBrokerApi } from '../../protocol/apis/unregister_broker.js';
import { AlterPartitionReassignmentsApi } from '../../protocol/apis/alter_partition_reassignments.js';
import { ListPartitionReassignmentsApi } from '../../protocol/apis/list_partition_reassignments.js';
import { AlterConfigsApi, IncrementalAlterConfigsApi } from '../../protocol/apis/alter_configs.js';
import { aclApis, advertisedApis, clientQuotaApis, scramCredentialApis } from '../../protocol/apis/index.js';
import type { AnyApi } from '../../protocol/schema.js';
import { callActiveController } from '../../cluster/controller_channel.js';
import type { MetadataFollower } from '../../cluster/metadata_follower.js';
import type { MetadataImage } from '../../cluster/metadata/image.js';
import type { AlterScramRequest } from '../../cluster/metadata/scram_changes.js';
import { alterUserScramCredentialsHandler, describeUserScramCredentialsHandler } from './scram_credentials.js';
import { createAclsHandler, deleteAclsHandler, describeAclsHandler, type AlterAclsDeps } from './acls.js';
import { alterClientQuotasHandler, describeClientQuotasHandler } from './client_quotas.js';
import type { AlterClientQuotasRequest } from '../../protocol/apis/client_quotas.js';
import { describeQuorumHandler, type DescribeQuorumDeps } from '../controller_server.js';
import { bindHandler, type BoundHandler, type HandlerTable } from '../handler.js';
import { LeaderThrottle } from '../leader_throttle.js';
import type { SegmentReader } from '../segment_reader.js';
import { apiKeysOf, apiVersionsHandler, BROKER_API_KEYS } from './api_versions.js';
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
import { describeLogDirsHandler, type DescribeLogDirsDeps } from './describe_log_dirs.js';
import { electLeadersHandler, type ElectLeadersDeps } from './elect_leaders.js';
import { unregisterBrokerHandler } from './unregister_broker.js';
import { alterPartitionReassignmentsHandler, listPartitionReassignmentsHandler } from './partition_reassignments.js';
import { alterConfigsHandler, incrementalAlterConfigsHandler } from './alter_configs.js';
import { fetchHandler, type FetchDeps } from './fetch.js';
import { findCoordinatorHandler } from './find_coordinator.js';
import { initProducerIdHandler } from './init_producer_id.js';
import { listOffsetsHandler, type OffsetLookup } from './list_offsets.js';
import { AllTopicsCache, metadataHandler } from './metadata.js';
import { offsetForLeaderEpochHandler, type EpochEndLookup } from './offset_for_leader_epoch.js';
import { produceHandler, type ProduceDeps } from './produce.js';

/** Everything some handler depends on; each handler is handed only the part its Deps names. */
export interface BrokerServices {
  readonly config: BrokerConfig;
  readonly cluster: ClusterView;
  readonly partitions: PartitionLookup & { readonly settledRevision: number };
  readonly topics: TopicAdmin;
  readonly router: Pick<PartitionRouter, 'produce' | 'fetch'>;
  readonly offsets: OffsetLookup & EpochEndLookup;
  readonly segments: Pick<SegmentReader, 'readRanges' | 'fileRanges'>;
  readonly producerIds: ProducerIdSource;
  readonly groups: GroupCalls;
  readonly metrics: BrokerMetrics;
  readonly limits: ProduceDeps['limits'] & FetchDeps['limits'];
  readonly handover: ProduceDeps['handover'];
  readonly logDirs: DescribeLogDirsDeps['logDirs'];
  /**
   * A node running the metadata quorum also answers DescribeQuorum here (as KRaft brokers forward
   * it), ElectLeaders, the partition reassignment APIs, IncrementalAlterConfigs/AlterConfigs and UnregisterBroker (run on the active
   * controller); null: none of them is advertised.
   */
  readonly quorum: (DescribeQuorumDeps & ElectLeadersDeps & { readonly follower: Pick<MetadataFollower, 'image' | 'until'> }) | null;
}

/** The APIs a node running the quorum adds to a client listener's. */
const QUORUM_BROKER_APIS: readonly AnyApi[] = [
  DescribeQuorumApi, ElectLeadersApi, AlterPartitionReassignmentsApi, ListPartitionReassignmentsApi, IncrementalAlterConfigsApi, AlterConfigsApi,
  UnregisterBrokerApi, ...scramCredentialApis, ...aclApis, ...clientQuotaApis,
] as readonly AnyApi[];

/** CreateAcls and DeleteAcls on a client listener: run on the active controller, answered once this node's image shows them. */
function aclDeps(quorum: NonNullable<BrokerServices['quorum']>): AlterAclsDeps {
  return {
    create: (creations, timeoutMs) => callActiveController(quorum.controller, { kind: 'createAcls', creations }, timeoutMs),
    delete: (filters, timeoutMs) => callActiveController(quorum.controller, { kind: 'deleteAcls', filters }, timeoutMs),
    applied: (holds, timeoutMs) => quorum.follower.until(holds, timeoutMs),
  };
}

/**
 * The handlers of one client listener: `cluster` names brokers by that listener's endpoints, and
 * `listenerHandlers` are the ones only it serves (SASL on a SASL listener), advertised with the rest.
 */
export function buildHandlers(s: BrokerServices, listenerHandlers: readonly BoundHandler[] = []): HandlerTable {
  const apis = [...advertisedApis, ...(s.quorum === null ? [] : QUORUM_BROKER_APIS), ...listenerHandlers.map((h) => h.api)];
  const bound = [
    bindHandler(apiVersionsHandler, { apiKeys: s.quorum === null && listenerHandlers.length === 0 ? BROKER_API_KEYS : apiKeysOf(apis) }),
    bindHandler(metadataHandler, {
      cluster: s.cluster, partitions: s.partitions, topics: s.topics, autoCreateTopics: s.config.autoCreateTopics,
      allTopicsCache: new AllTopicsCache(() => s.partitions.settledRevision),
    }),
    bindHandler(produceHandler, s),
    bindHandler(fetchHandler, { ...s, leaderThrottle: new LeaderThrottle(s.cluster) }),
    bindHandler(listOffsetsHandler, s),
    bindHandler(offsetForLeaderEpochHandler, s),
    bindHandler(createTopicsHandler, s),
    bindHandler(deleteTopicsHandler, s),
    bindHandler(createPartitionsHandler, s),
    bindHandler(initProducerIdHandler, s),
    bindHandler(describeConfigsHandler, s),
    bindHandler(describeClusterHandler, s),
    bindHandler(describeLogDirsHandler, s),
    bindHandler(findCoordinatorHandler, s),
    bindHandler(joinGroupHandler, s),
    bindHandler(syncGroupHandler, s),
    bindHandler(heartbeatHandler, s),
    bindHandler(leaveGroupHandler, s),
    bindHandler(offsetCommitHandler, s),
    bindHandler(offsetFetchHandler, s),
    bindHandler(listGroupsHandler, s),
    bindHandler(describeGroupsHandler, s),
    bindHandler(deleteGroupsHandler, s),
    bindHandler(offsetDeleteHandler, s),
    bindHandler(consumerGroupHeartbeatHandler, s),
    bindHandler(consumerGroupDescribeHandler, s),
    ...(s.quorum === null ? [] : [
      bindHandler(describeQuorumHandler, s.quorum), bindHandler(electLeadersHandler, s.quorum),
      bindHandler(alterPartitionReassignmentsHandler, s.quorum), bindHandler(listPartitionReassignmentsHandler, s.quorum),
      bindHandler(incrementalAlterConfigsHandler, s.quorum), bindHandler(alterConfigsHandler, s.quorum),
      bindHandler(unregisterBrokerHandler, s.quorum),
      bindHandler(describeUserScramCredentialsHandler, { image: () => s.quorum!.follower.image }),
      bindHandler(alterUserScramCredentialsHandler, {
        alter: (request: AlterScramRequest, timeoutMs: number) => callActiveController(s.quorum!.controller, { kind: 'alterScramCredentials', request }, timeoutMs),
        applied: (holds: (image: MetadataImage) => boolean, timeoutMs: number) => s.quorum!.follower.until(holds, timeoutMs),
      }),
      bindHandler(describeAclsHandler, { image: () => s.quorum!.follower.image }),
      bindHandler(createAclsHandler, aclDeps(s.quorum)), bindHandler(deleteAclsHandler, aclDeps(s.quorum)),
      bindHandler(describeClientQuotasHandler, { image: () => s.quorum!.follower.image }),
      bindHandler(alterClientQuotasHandler, {
        alter: (request: AlterClientQuotasRequest, timeoutMs: number) => callActiveController(s.quorum!.controller, { kind: 'alterClientQuotas', request }, timeoutMs),
        applied: (holds: (image: MetadataImage) => boolean, timeoutMs: number) => s.quorum!.follower.until(holds, timeoutMs),
      }),
    ]),
    ...listenerHandlers,
  ];
  return new Map(bound.map((h) => [h.api.key, h]));
}
