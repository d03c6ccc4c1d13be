// DescribeCluster (key 60) wire schema, v0-1 (flexible in every version; v1 adds the endpoint
// type: 1 = brokers, 2 = controllers). Runs on the main thread.

import { defineApi } from '../schema.js';

export interface DescribeClusterRequest {
  includeClusterAuthorizedOperations: boolean;
  endpointType: number;
}

export interface DescribeClusterResponseBroker {
  brokerId: number;
  host: string;
  port: number;
  rack: string | null;
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
  maxVersion: 1,
  flexibleVersions: '0+',
  request: [
    { name: 'includeClusterAuthorizedOperations', type: 'bool', versions: '0+' },
    { name: 'endpointType', type: 'int8', versions: '1+', default: 1 },
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
      ], array: true, versions: '0+',
    },
    { name: 'clusterAuthorizedOperations', type: 'int32', versions: '0+', default: -2147483648 },
  ],
});
