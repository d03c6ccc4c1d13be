// BrokerRegistration (key 62) wire schema, v0-4, flexible in every version (KIP-631): a broker
// registers its listeners, features and rack with the active controller, which answers with the
// broker epoch (the metadata offset of its registration record). v1 adds IsMigratingZkBroker, v2
// LogDirs, v3 PreviousBrokerEpoch (KIP-966); v4 changes no field. One Sluice extension:
// `sluiceAdminAddress` (tagged, tag 1000), where the broker's admin HTTP listener answers.

import { defineApi } from '../schema.js';

export interface BrokerRegistrationListener {
  name: string;
  host: string;
  port: number;
  securityProtocol: number;
}

export interface BrokerRegistrationFeature {
  name: string;
  minSupportedVersion: number;
  maxSupportedVersion: number;
}

export interface BrokerRegistrationRequest {
  brokerId: number;
  clusterId: string;
  incarnationId: string;
  listeners: BrokerRegistrationListener[];
  features: BrokerRegistrationFeature[];
  rack: string | null;
  /** v1+. */
  isMigratingZkBroker: boolean;
  /** v2+: directory ids of the broker's available log directories. */
  logDirs: string[];
  /** v3+; -1 when the broker did not shut down cleanly. */
  previousBrokerEpoch: number;
  /** Tagged, Sluice only: the admin HTTP listener's host:port, null when unknown. */
  sluiceAdminAddress: string | null;
}

export interface BrokerRegistrationResponse {
  throttleTimeMs: number;
  errorCode: number;
  /** -1 when none was assigned. */
  brokerEpoch: number;
}

export const BrokerRegistrationApi = defineApi<BrokerRegistrationRequest, BrokerRegistrationResponse>({
  apiKey: 62,
  name: 'BrokerRegistration',
  minVersion: 0,
  maxVersion: 4,
  flexibleVersions: '0+',
  request: [
    { name: 'brokerId', type: 'int32', versions: '0+' },
    { name: 'clusterId', type: 'string', versions: '0+' },
    { name: 'incarnationId', type: 'uuid', versions: '0+' },
    {
      name: 'listeners', type: [
        { name: 'name', type: 'string', versions: '0+' },
        { name: 'host', type: 'string', versions: '0+' },
        { name: 'port', type: 'uint16', versions: '0+' },
        { name: 'securityProtocol', type: 'int16', versions: '0+' },
      ], array: true, versions: '0+',
    },
    {
      name: 'features', type: [
        { name: 'name', type: 'string', versions: '0+' },
        { name: 'minSupportedVersion', type: 'int16', versions: '0+' },
        { name: 'maxSupportedVersion', type: 'int16', versions: '0+' },
      ], array: true, versions: '0+',
    },
    { name: 'rack', type: 'string', versions: '0+', nullableVersions: '0+' },
    { name: 'isMigratingZkBroker', type: 'bool', versions: '1+', default: false },
    { name: 'logDirs', type: 'uuid', array: true, versions: '2+' },
    { name: 'previousBrokerEpoch', type: 'int64', versions: '3+', default: -1 },
    { name: 'sluiceAdminAddress', type: 'string', versions: '0+', nullableVersions: '0+', taggedVersions: '0+', tag: 1000, default: null },
  ],
  response: [
    { name: 'throttleTimeMs', type: 'int32', versions: '0+' },
    { name: 'errorCode', type: 'int16', versions: '0+' },
    { name: 'brokerEpoch', type: 'int64', versions: '0+', default: -1 },
  ],
});
