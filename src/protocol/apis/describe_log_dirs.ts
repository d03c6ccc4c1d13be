// DescribeLogDirs (key 35) wire schema, v0-4 (KIP-113; flexible from v2; v3 adds the top-level
// error code, v4, KIP-827, each log dir's total and usable bytes): the replicas a broker holds in
// each of its log directories, with their size on disk. Main thread.

import { defineApi } from '../schema.js';

export interface DescribableLogDirTopic {
  topic: string;
  partitions: number[];
}

export interface DescribeLogDirsRequest {
  /** Null: every partition the broker holds. */
  topics: DescribableLogDirTopic[] | null;
}

export interface DescribeLogDirsPartition {
  partitionIndex: number;
  /** Bytes of the partition's log segments. */
  partitionSize: number;
  /** High watermark minus log end for a current replica (never below 0); a future replica's distance to the current one. */
  offsetLag: number;
  /** A replica being moved between log dirs of the broker (AlterReplicaLogDirs). */
  isFutureKey: boolean;
}

export interface DescribeLogDirsTopic {
  name: string;
  partitions: DescribeLogDirsPartition[];
}

export interface DescribeLogDirsResult {
  errorCode: number;
  /** Absolute path. */
  logDir: string;
  topics: DescribeLogDirsTopic[];
  /** v4+; -1 when unknown. */
  totalBytes: number;
  /** v4+; -1 when unknown. */
  usableBytes: number;
}

export interface DescribeLogDirsResponse {
  throttleTimeMs: number;
  /** v3+. */
  errorCode: number;
  results: DescribeLogDirsResult[];
}

export const DescribeLogDirsApi = defineApi<DescribeLogDirsRequest, DescribeLogDirsResponse>({
  apiKey: 35,
  name: 'DescribeLogDirs',
  minVersion: 0,
  maxVersion: 4,
  flexibleVersions: '2+',
  request: [
    {
      name: 'topics', type: [
        { name: 'topic', type: 'string', versions: '0+' },
        { name: 'partitions', type: 'int32', array: true, versions: '0+' },
      ], array: true, versions: '0+', nullableVersions: '0+',
    },
  ],
  response: [
    { name: 'throttleTimeMs', type: 'int32', versions: '0+' },
    { name: 'errorCode', type: 'int16', versions: '3+', default: 0 },
    {
      name: 'results', type: [
        { name: 'errorCode', type: 'int16', versions: '0+' },
        { name: 'logDir', type: 'string', versions: '0+' },
        {
          name: 'topics', type: [
            { name: 'name', type: 'string', versions: '0+' },
            {
              name: 'partitions', type: [
                { name: 'partitionIndex', type: 'int32', versions: '0+' },
                { name: 'partitionSize', type: 'int64', versions: '0+' },
                { name: 'offsetLag', type: 'int64', versions: '0+' },
                { name: 'isFutureKey', type: 'bool', versions: '0+' },
              ], array: true, versions: '0+',
            },
          ], array: true, versions: '0+',
        },
        { name: 'totalBytes', type: 'int64', versions: '4+', default: -1 },
        { name: 'usableBytes', type: 'int64', versions: '4+', default: -1 },
      ], array: true, versions: '0+',
    },
  ],
});
