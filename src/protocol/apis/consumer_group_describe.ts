// ConsumerGroupDescribe (key 69) wire schema, v0 (flexible). Describes KIP-848 groups: epochs,
// assignor, and each member's subscription, current and target assignment. Kafka's v1 member
// type lies above our range. Runs on the main thread.

import { defineApi } from '../schema.js';
import type { Field } from '../schema.js';

export interface ConsumerGroupDescribeRequest {
  groupIds: string[];
  includeAuthorizedOperations: boolean;
}

export interface ConsumerGroupDescribeTopicPartitions {
  /** 32 lowercase hex chars. */
  topicId: string;
  topicName: string;
  partitions: number[];
}

export interface ConsumerGroupDescribeAssignment {
  topicPartitions: ConsumerGroupDescribeTopicPartitions[];
}

export interface ConsumerGroupDescribeMember {
  memberId: string;
  instanceId: string | null;
  rackId: string | null;
  memberEpoch: number;
  clientId: string;
  clientHost: string;
  subscribedTopicNames: string[];
  subscribedTopicRegex: string | null;
  assignment: ConsumerGroupDescribeAssignment;
  targetAssignment: ConsumerGroupDescribeAssignment;
}

export interface ConsumerGroupDescribeGroup {
  errorCode: number;
  errorMessage: string | null;
  groupId: string;
  groupState: string;
  groupEpoch: number;
  assignmentEpoch: number;
  assignorName: string;
  members: ConsumerGroupDescribeMember[];
  /** INT32_MIN = not requested. */
  authorizedOperations: number;
}

export interface ConsumerGroupDescribeResponse {
  throttleTimeMs: number;
  groups: ConsumerGroupDescribeGroup[];
}

const assignment: readonly Field[] = [
  {
    name: 'topicPartitions', type: [
      { name: 'topicId', type: 'uuid', versions: '0+' },
      { name: 'topicName', type: 'string', versions: '0+' },
      { name: 'partitions', type: 'int32', array: true, versions: '0+' },
    ], array: true, versions: '0+',
  },
];

const member: readonly Field[] = [
  { name: 'memberId', type: 'string', versions: '0+' },
  { name: 'instanceId', type: 'string', versions: '0+', nullableVersions: '0+', default: null },
  { name: 'rackId', type: 'string', versions: '0+', nullableVersions: '0+', default: null },
  { name: 'memberEpoch', type: 'int32', versions: '0+' },
  { name: 'clientId', type: 'string', versions: '0+' },
  { name: 'clientHost', type: 'string', versions: '0+' },
  { name: 'subscribedTopicNames', type: 'string', array: true, versions: '0+' },
  { name: 'subscribedTopicRegex', type: 'string', versions: '0+', nullableVersions: '0+', default: null },
  { name: 'assignment', type: assignment, versions: '0+' },
  { name: 'targetAssignment', type: assignment, versions: '0+' },
];

export const ConsumerGroupDescribeApi = defineApi<ConsumerGroupDescribeRequest, ConsumerGroupDescribeResponse>({
  apiKey: 69,
  name: 'ConsumerGroupDescribe',
  minVersion: 0,
  maxVersion: 0,
  flexibleVersions: '0+',
  request: [
    { name: 'groupIds', type: 'string', array: true, versions: '0+' },
    { name: 'includeAuthorizedOperations', type: 'bool', versions: '0+' },
  ],
  response: [
    { name: 'throttleTimeMs', type: 'int32', versions: '0+' },
    {
      name: 'groups', type: [
        { name: 'errorCode', type: 'int16', versions: '0+' },
        { name: 'errorMessage', type: 'string', versions: '0+', nullableVersions: '0+', default: null },
        { name: 'groupId', type: 'string', versions: '0+' },
        { name: 'groupState', type: 'string', versions: '0+' },
        { name: 'groupEpoch', type: 'int32', versions: '0+' },
        { name: 'assignmentEpoch', type: 'int32', versions: '0+' },
        { name: 'assignorName', type: 'string', versions: '0+' },
        { name: 'members', type: member, array: true, versions: '0+' },
        { name: 'authorizedOperations', type: 'int32', versions: '0+', default: -2147483648 },
      ], array: true, versions: '0+',
    },
  ],
});
