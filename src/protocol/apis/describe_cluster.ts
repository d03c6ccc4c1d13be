// DescribeCluster (key 60) wire schema, v0-2 (flexible in every version; v1 adds the endpoint
// type: 1 = brokers, 2 = controllers; v2, KIP-1073, lists fenced brokers on request and marks
// them). One Sluice extension: `sluiceWarming` (tagged, tag 1000) on a broker still warming up
// after joining the cluster, and `sluiceAdminAddress` (tagged, tag 1001, null when unknown), where
// its admin HTTP listener answers; Kafka's clients skip the tags. Runs on the main thread.

import { defineApi } from '../schema.js';

export interface DescribeClusterRequest {
  includeClusterAuthorizedOperations: boolean;
  endpointType: number;
  /** v2+. */
  includeFencedBrokers: boolean;
}

export interface DescribeClusterResponseBroker {
  brokerId: number;
  host: string;
  port: number;
  rack: string | null;
  /** v2+. */
  isFenced: boolean;
  /** Tagged, Sluice only. */
  sluiceWarming: boolean;
  /** Tagged, Sluice only: the admin HTTP listener's host:port. */
  sluiceAdminAddress: string | null;
}

export interface DescribeClusterResponse {
  throttleTimeMs: number;
  errorCode: number;
  errorMessage: string | null;
  endpointType: number;
  clusterId: string;
  controllerId: number;
  brokers: DescribeClusterResponseBroker[];
  /** INT32_MIN = not requested. */
  clusterAuthorizedOperations: number;
}

export const DescribeClusterApi = defineApi<DescribeClusterRequest, DescribeClusterResponse>({
  apiKey: 60,
  name: 'DescribeCluster',
  minVersion: 0,
  maxVersion: 2,
  flexibleVersions: '0+',
  request: [
    { name: 'includeClusterAuthorizedOperations', type: 'bool', versions: '0+' },
    { name: 'endpointType', type: 'int8', versions: '1+', default: 1 },
    { name: 'includeFencedBrokers', type: 'bool', versions: '2+', default: false },
  ],
  response: [
    { name: 'throttleTimeMs', type: 'int32', versions: '0+' },
    { name: 'errorCode', type: 'int16', versions: '0+' },
    { name: 'errorMessage', type: 'string', versions: '0+', nullableVersions: '0+', default: null },
    { name: 'endpointType', type: 'int8', versions: '1+', default: 1 },
    { name: 'clusterId', type: 'string', versions: '0+' },
    { name: 'controllerId', type: 'int32', versions: '0+', default: -1 },
    {
      name: 'brokers', type: [
        { name: 'brokerId', type: 'int32', versions: '0+' },
        { name: 'host', type: 'string', versions: '0+' },
        { name: 'port', type: 'int32', versions: '0+' },
        { name: 'rack', type: 'string', versions: '0+', nullableVersions: '0+', default: null },
        { name: 'isFenced', type: 'bool', versions: '2+', default: false },
        { name: 'sluiceWarming', type: 'bool', versions: '0+', taggedVersions: '0+', tag: 1000, default: false },
        { name: 'sluiceAdminAddress', type: 'string', versions: '0+', nullableVersions: '0+', taggedVersions: '0+', tag: 1001, default: null },
      ], array: true, versions: '0+',
    },
    { name: 'clusterAuthorizedOperations', type: 'int32', versions: '0+', default: -2147483648 },
  ],
});
