// Registry of every API the codec knows, by api key (main thread; built once at load): the APIs
// clients use, which ApiVersions advertises (each has a handler), and the quorum and
// broker-lifecycle APIs controllers and brokers speak among themselves (KRaft), registered so
// frames of them decode but not advertised until the broker serves them.

import type { AnyApi } from '../schema.js';
import { ApiVersionsApi } from './api_versions.js';
import { ConsumerGroupDescribeApi } from './consumer_group_describe.js';
import { ConsumerGroupHeartbeatApi } from './consumer_group_heartbeat.js';
import { DeleteGroupsApi } from './delete_groups.js';
import { DescribeGroupsApi } from './describe_groups.js';
import { HeartbeatApi } from './heartbeat.js';
import { JoinGroupApi } from './join_group.js';
import { LeaveGroupApi } from './leave_group.js';
import { ListGroupsApi } from './list_groups.js';
import { OffsetCommitApi } from './offset_commit.js';
import { OffsetDeleteApi } from './offset_delete.js';
import { OffsetFetchApi } from './offset_fetch.js';
import { SyncGroupApi } from './sync_group.js';
import { CreatePartitionsApi } from './create_partitions.js';
import { CreateTopicsApi } from './create_topics.js';
import { DeleteTopicsApi } from './delete_topics.js';
import { DescribeClusterApi } from './describe_cluster.js';
import { DescribeConfigsApi } from './describe_configs.js';
import { DescribeLogDirsApi } from './describe_log_dirs.js';
import { FetchApi } from './fetch.js';
import { FindCoordinatorApi } from './find_coordinator.js';
import { InitProducerIdApi } from './init_producer_id.js';
import { ListOffsetsApi } from './list_offsets.js';
import { MetadataApi } from './metadata.js';
import { OffsetForLeaderEpochApi } from './offset_for_leader_epoch.js';
import { ProduceApi } from './produce.js';
import { AddRaftVoterApi } from './add_raft_voter.js';
import { AllocateProducerIdsApi } from './allocate_producer_ids.js';
import { AlterPartitionApi } from './alter_partition.js';
import { ElectLeadersApi } from './elect_leaders.js';
import { AlterPartitionReassignmentsApi } from './alter_partition_reassignments.js';
import { ListPartitionReassignmentsApi } from './list_partition_reassignments.js';
import { AlterConfigsApi, IncrementalAlterConfigsApi } from './alter_configs.js';
import { BeginQuorumEpochApi } from './begin_quorum_epoch.js';
import { BrokerHeartbeatApi } from './broker_heartbeat.js';
import { BrokerRegistrationApi } from './broker_registration.js';
import { DescribeQuorumApi } from './describe_quorum.js';
import { EndQuorumEpochApi } from './end_quorum_epoch.js';
import { FetchSnapshotApi } from './fetch_snapshot.js';
import { RemoveRaftVoterApi } from './remove_raft_voter.js';
import { VoteApi } from './vote.js';
import { UnregisterBrokerApi } from './unregister_broker.js';
import { SaslAuthenticateApi, SaslHandshakeApi } from './sasl.js';
import { AlterUserScramCredentialsApi, DescribeUserScramCredentialsApi } from './scram_credentials.js';
import { CreateAclsApi, DeleteAclsApi, DescribeAclsApi } from './acls.js';
import { AlterClientQuotasApi, DescribeClientQuotasApi } from './client_quotas.js';

/** The APIs clients use, with exactly the ranges ApiVersions advertises. */
export const advertisedApis: readonly AnyApi[] = [
  ProduceApi, FetchApi, ListOffsetsApi, MetadataApi, ApiVersionsApi, CreateTopicsApi,
  DeleteTopicsApi, InitProducerIdApi, DescribeConfigsApi, CreatePartitionsApi, DescribeClusterApi,
  FindCoordinatorApi, JoinGroupApi, SyncGroupApi, HeartbeatApi, LeaveGroupApi, OffsetCommitApi, OffsetFetchApi,
  ListGroupsApi, DescribeGroupsApi, DeleteGroupsApi, OffsetDeleteApi, ConsumerGroupHeartbeatApi, ConsumerGroupDescribeApi,
  OffsetForLeaderEpochApi, DescribeLogDirsApi,
] as readonly AnyApi[];

/**
 * KRaft's quorum (controller to controller) and broker-lifecycle (broker to controller) APIs, and
 * ElectLeaders, the partition reassignment APIs, the alter-configs APIs and UnregisterBroker, which only a cluster node serves.
 */
export const clusterApis: readonly AnyApi[] = [
  VoteApi, BeginQuorumEpochApi, EndQuorumEpochApi, DescribeQuorumApi, FetchSnapshotApi, AddRaftVoterApi,
  RemoveRaftVoterApi, BrokerRegistrationApi, BrokerHeartbeatApi, AllocateProducerIdsApi, AlterPartitionApi, ElectLeadersApi,
  AlterPartitionReassignmentsApi, ListPartitionReassignmentsApi, IncrementalAlterConfigsApi, AlterConfigsApi, UnregisterBrokerApi,
] as readonly AnyApi[];

/**
 * The SASL APIs, which a listener with SASL serves (and advertises), and the SCRAM credential and
 * client quota APIs a node running the metadata quorum serves on its client listeners.
 */
export const saslApis: readonly AnyApi[] = [SaslHandshakeApi, SaslAuthenticateApi] as readonly AnyApi[];
export const scramCredentialApis: readonly AnyApi[] = [DescribeUserScramCredentialsApi, AlterUserScramCredentialsApi] as readonly AnyApi[];
/** The ACL APIs, which a node running the metadata quorum serves on its client listeners. */
export const aclApis: readonly AnyApi[] = [DescribeAclsApi, CreateAclsApi, DeleteAclsApi] as readonly AnyApi[];
export const clientQuotaApis: readonly AnyApi[] = [DescribeClientQuotasApi, AlterClientQuotasApi] as readonly AnyApi[];

export const apiByKey: ReadonlyMap<number, AnyApi> = new Map([...advertisedApis, ...clusterApis, ...saslApis, ...scramCredentialApis, ...aclApis, ...clientQuotaApis].map((api) => [api.key, api]));

/**
 * Whether a request of (apiKey, apiVersion) uses request header v2; the `isFlexible` argument for
 * readRequestHeader. Unknown keys and versions outside our range answer false: the header
 * fields before the tag buffer are the same either way, and such bodies are never parsed.
 */
export function isFlexibleRequest(apiKey: number, apiVersion: number): boolean {
  const api = apiByKey.get(apiKey);
  if (api === undefined || apiVersion < api.minVersion || apiVersion > api.maxVersion) return false;
  return api.isFlexible(apiVersion);
}
