// KRaft's control records of the `__cluster_metadata` log: the record key that names a control
// record's type, and the two value schemas the Raft core writes (LeaderChangeMessage and
// VotersRecord), transcribed from Kafka's data-message definitions so a Kafka log dumper reads
// our metadata log. Pure wire vocabulary; any thread.
//
// A control record's key is two int16s, version (0) then type; its value is the type's message
// written without a version prefix (the message carries its own `version` field).
import { defineMessage, type Field } from './schema.js';

/** Control record types (Kafka's ControlRecordType). */
export const ControlRecordType = {
  abort: 0,
  commit: 1,
  leaderChange: 2,
  snapshotHeader: 3,
  snapshotFooter: 4,
  kraftVersion: 5,
  kraftVoters: 6,
} as const;

/** Bytes of a control record key: int16 version + int16 type. */
export const CONTROL_KEY_BYTES = 4;
export const CONTROL_KEY_VERSION = 0;

export function encodeControlKey(type: number): Buffer {
  const key = Buffer.alloc(CONTROL_KEY_BYTES);
  key.writeInt16BE(CONTROL_KEY_VERSION, 0);
  key.writeInt16BE(type, 2);
  return key;
}

export interface LeaderChangeVoter { voterId: number }

export interface LeaderChangeMessage {
  version: number;
  leaderId: number;
  voters: LeaderChangeVoter[];
  grantingVoters: LeaderChangeVoter[];
}

const voterFields: readonly Field[] = [{ name: 'voterId', type: 'int32', versions: '0+' }];

export const LeaderChangeMessageSchema = defineMessage<LeaderChangeMessage>({
  name: 'LeaderChangeMessage', minVersion: 0, maxVersion: 0, flexibleVersions: '0+',
  fields: [
    { name: 'version', type: 'int16', versions: '0+' },
    { name: 'leaderId', type: 'int32', versions: '0+' },
    { name: 'voters', type: voterFields, array: true, versions: '0+' },
    { name: 'grantingVoters', type: voterFields, array: true, versions: '0+' },
  ],
});

export interface VoterEndpoint {
  name: string;
  host: string;
  port: number;
}

export interface VotersRecordVoter {
  voterId: number;
  /** The voter's directory id (KIP-853); the zero UUID when directory ids are not tracked. */
  voterUuid: string;
  endpoints: VoterEndpoint[];
  kraftVersionFeature: { minSupportedVersion: number; maxSupportedVersion: number };
}

export interface VotersRecord {
  version: number;
  voters: VotersRecordVoter[];
}

export const VotersRecordSchema = defineMessage<VotersRecord>({
  name: 'VotersRecord', minVersion: 0, maxVersion: 0, flexibleVersions: '0+',
  fields: [
    { name: 'version', type: 'int16', versions: '0+' },
    {
      name: 'voters', type: [
        { name: 'voterId', type: 'int32', versions: '0+' },
        { name: 'voterUuid', type: 'uuid', versions: '0+' },
        {
          name: 'endpoints', type: [
            { name: 'name', type: 'string', versions: '0+' },
            { name: 'host', type: 'string', versions: '0+' },
            { name: 'port', type: 'uint16', versions: '0+' },
          ], array: true, versions: '0+',
        },
        {
          name: 'kraftVersionFeature', type: [
            { name: 'minSupportedVersion', type: 'int16', versions: '0+' },
            { name: 'maxSupportedVersion', type: 'int16', versions: '0+' },
          ], versions: '0+',
        },
      ], array: true, versions: '0+',
    },
  ],
});
