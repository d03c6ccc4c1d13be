// BrokerHeartbeat (key 63) wire schema, v0-1, flexible in every version (KIP-631): a registered
// broker reports its metadata offset and whether it wants to be fenced or shut down; the
// controller answers whether it is caught up, fenced, and may shut down. v1 adds the tagged
// OfflineLogDirs. One Sluice extension: `sluiceWarm` (tagged, tag 1000), a warming broker
// reporting its replicas caught up and its read warm-up done; Kafka's controllers skip the tag.

import { defineApi } from '../schema.js';

export interface BrokerHeartbeatRequest {
  brokerId: number;
  brokerEpoch: number;
  currentMetadataOffset: number;
  wantFence: boolean;
  wantShutDown: boolean;
  /** Tagged (v1+): directory ids of failed log directories. */
  offlineLogDirs: string[];
  /** Tagged, Sluice only: this broker, while warming up, is ready to lead. */
  sluiceWarm: boolean;
}

export interface BrokerHeartbeatResponse {
  throttleTimeMs: number;
  errorCode: number;
  isCaughtUp: boolean;
  isFenced: boolean;
  shouldShutDown: boolean;
}

export const BrokerHeartbeatApi = defineApi<BrokerHeartbeatRequest, BrokerHeartbeatResponse>({
  apiKey: 63,
  name: 'BrokerHeartbeat',
  minVersion: 0,
  maxVersion: 1,
  flexibleVersions: '0+',
  request: [
    { name: 'brokerId', type: 'int32', versions: '0+' },
    { name: 'brokerEpoch', type: 'int64', versions: '0+', default: -1 },
    { name: 'currentMetadataOffset', type: 'int64', versions: '0+' },
    { name: 'wantFence', type: 'bool', versions: '0+' },
    { name: 'wantShutDown', type: 'bool', versions: '0+' },
    { name: 'offlineLogDirs', type: 'uuid', array: true, versions: '1+', taggedVersions: '1+', tag: 0 },
    { name: 'sluiceWarm', type: 'bool', versions: '0+', taggedVersions: '0+', tag: 1000, default: false },
  ],
  response: [
    { name: 'throttleTimeMs', type: 'int32', versions: '0+' },
    { name: 'errorCode', type: 'int16', versions: '0+' },
    { name: 'isCaughtUp', type: 'bool', versions: '0+', default: false },
    { name: 'isFenced', type: 'bool', versions: '0+', default: true },
    { name: 'shouldShutDown', type: 'bool', versions: '0+' },
  ],
});
