// FetchSnapshot (key 59) wire schema, v0-1, flexible in every version (KIP-630, KIP-853): a
// follower pulls the leader's snapshot in byte ranges from `position`. v1 adds the fetcher's
// directory id and the endpoints of the leader a response names.
// One Sluice extension: `sluiceVotersRecord`, a tagged field of the response partition (tag
// SLUICE_VOTERS_RECORD_TAG), carries the voter set the snapshot was taken under, with the voters'
// endpoints, as a VotersRecord value. KRaft keeps that record in the snapshot's header batch;
// Sluice keeps it beside the snapshot's data. Kafka's readers skip unknown tags, and the tag sits
// far above the small numbers Kafka assigns. (Tag 1000 carried voter ids only and is retired: a
// reader of it would take a record for ids.)

import { defineApi, type Field } from '../schema.js';
import { leaderIdAndEpochFields, type LeaderIdAndEpoch } from './leader_hints.js';
import { quorumNodeEndpointFields, type QuorumNodeEndpoint } from './quorum_common.js';

export interface SnapshotIdWire {
  endOffset: number;
  epoch: number;
}

export interface FetchSnapshotRequestPartition {
  partition: number;
  /** -1 when not known. */
  currentLeaderEpoch: number;
  snapshotId: SnapshotIdWire;
  /** Byte position in the snapshot to read from. */
  position: number;
  /** Tagged (v1+). */
  replicaDirectoryId: string;
}

export interface FetchSnapshotRequestTopic {
  name: string;
  partitions: FetchSnapshotRequestPartition[];
}

export interface FetchSnapshotRequest {
  /** Tagged. */
  clusterId: string | null;
  replicaId: number;
  maxBytes: number;
  topics: FetchSnapshotRequestTopic[];
}

export interface FetchSnapshotResponsePartition {
  index: number;
  errorCode: number;
  snapshotId: SnapshotIdWire;
  /** Tagged; sent only when not {-1, -1}. */
  currentLeader: LeaderIdAndEpoch;
  /** The whole snapshot's size in bytes. */
  size: number;
  /** Where `unalignedRecords` starts in the snapshot. */
  position: number;
  /** Snapshot bytes, not aligned to batch boundaries. */
  unalignedRecords: Buffer;
  /** Tagged, Sluice only: the VotersRecord in force at the snapshot's end offset (empty without a snapshot). */
  sluiceVotersRecord: Buffer;
}

export interface FetchSnapshotResponseTopic {
  name: string;
  partitions: FetchSnapshotResponsePartition[];
}

export interface FetchSnapshotResponse {
  throttleTimeMs: number;
  errorCode: number;
  topics: FetchSnapshotResponseTopic[];
  /** Tagged (v1+). */
  nodeEndpoints: QuorumNodeEndpoint[];
}

export const SLUICE_VOTERS_RECORD_TAG = 1001;

const snapshotId: readonly Field[] = [
  { name: 'endOffset', type: 'int64', versions: '0+' },
  { name: 'epoch', type: 'int32', versions: '0+' },
];

export const FetchSnapshotApi = defineApi<FetchSnapshotRequest, FetchSnapshotResponse>({
  apiKey: 59,
  name: 'FetchSnapshot',
  minVersion: 0,
  maxVersion: 1,
  flexibleVersions: '0+',
  request: [
    { name: 'clusterId', type: 'string', versions: '0+', nullableVersions: '0+', default: null, taggedVersions: '0+', tag: 0 },
    { name: 'replicaId', type: 'int32', versions: '0+', default: -1 },
    { name: 'maxBytes', type: 'int32', versions: '0+', default: 0x7fffffff },
    {
      name: 'topics', type: [
        { name: 'name', type: 'string', versions: '0+' },
        {
          name: 'partitions', type: [
            { name: 'partition', type: 'int32', versions: '0+' },
            { name: 'currentLeaderEpoch', type: 'int32', versions: '0+' },
            { name: 'snapshotId', type: snapshotId, versions: '0+' },
            { name: 'position', type: 'int64', versions: '0+' },
            { name: 'replicaDirectoryId', type: 'uuid', versions: '1+', taggedVersions: '1+', tag: 0 },
          ], array: true, versions: '0+',
        },
      ], array: true, versions: '0+',
    },
  ],
  response: [
    { name: 'throttleTimeMs', type: 'int32', versions: '0+' },
    { name: 'errorCode', type: 'int16', versions: '0+' },
    {
      name: 'topics', type: [
        { name: 'name', type: 'string', versions: '0+' },
        {
          name: 'partitions', type: [
            { name: 'index', type: 'int32', versions: '0+' },
            { name: 'errorCode', type: 'int16', versions: '0+' },
            { name: 'snapshotId', type: snapshotId, versions: '0+' },
            { name: 'currentLeader', type: leaderIdAndEpochFields, versions: '0+', taggedVersions: '0+', tag: 0 },
            { name: 'size', type: 'int64', versions: '0+' },
            { name: 'position', type: 'int64', versions: '0+' },
            { name: 'unalignedRecords', type: 'bytes', versions: '0+' },
            { name: 'sluiceVotersRecord', type: 'bytes', versions: '0+', taggedVersions: '0+', tag: SLUICE_VOTERS_RECORD_TAG },
          ], array: true, versions: '0+',
        },
      ], array: true, versions: '0+',
    },
    { name: 'nodeEndpoints', type: quorumNodeEndpointFields, array: true, versions: '1+', taggedVersions: '1+', tag: 0 },
  ],
});
