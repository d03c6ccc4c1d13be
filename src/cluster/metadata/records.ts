// The records of the cluster metadata log, after KRaft's metadata records (cluster.md §2.1), and
// their binary form. One Raft `data` entry holds one batch: a record count, then one frame per
// record (apiKey uvarint, version uvarint, the fields), applied atomically. Integers that may be
// -1 are zigzag varints, offsets and producer ids varlongs, ids 16 raw bytes, strings compact.
// Pure; any thread. Decoding never trusts a length or a count it reads: bad bytes throw a
// KafkaError with CORRUPT_MESSAGE, which the caller turns into a refusal, never a crash.
import { ErrorCode, KafkaError } from '../../protocol/errors.js';
import type { PartitionRecord } from '../cluster_view.js';
import { ProtocolError, Reader } from '../../protocol/reader.js';
import { Writer } from '../../protocol/writer.js';
import { SCRAM_MECHANISMS, type ScramCredential, type ScramMechanism } from '../../common/sasl_mechanisms.js';
import { validBinding, type AclBinding } from '../../coordinator/acl/acl.js';
import { CLIENT_ID_ENTITY, IP_ENTITY, isQuotaKey, quotaEntityParts, USER_ENTITY, type QuotaEntity, type QuotaKey } from '../../coordinator/client_quotas.js';

export interface BrokerEndpointRecord {
  /** The listener's name, e.g. PLAINTEXT. */
  readonly name: string;
  readonly host: string;
  readonly port: number;
  /** Kafka's SecurityProtocol id: 0 PLAINTEXT, 1 SSL, 2 SASL_PLAINTEXT, 3 SASL_SSL. */
  readonly securityProtocol: number;
}

/** BrokerRegistrationChange's `fenced`: -1 unfence, 0 unchanged, 1 fence (KRaft's BrokerRegistrationFencingChange). */
export type FencingChange = -1 | 0 | 1;

/** PartitionChange's `leader` when the leader stays as it is. */
export const LEADER_UNCHANGED = -2;
/** No leader (a partition whose leader was fenced and has no eligible successor yet). */
export const NO_LEADER = -1;

/** Resource types of ConfigRecord, as DescribeConfigs numbers them. */
export const ConfigResource = { TOPIC: 2, BROKER: 4 } as const;

export type MetadataRecord =
  | {
    readonly type: 'registerBroker';
    readonly brokerId: number;
    /** 32 hex chars: a new one per broker process start. */
    readonly incarnationId: string;
    /** The metadata log offset at which this registration was written. */
    readonly brokerEpoch: number;
    readonly endpoints: readonly BrokerEndpointRecord[];
    readonly rack: string | null;
    readonly fenced: boolean;
    readonly inControlledShutdown: boolean;
    /** A broker new to the cluster: it hosts replicas and joins ISRs but leads only where no warm replica can (record version 1; absent: false). */
    readonly warming?: boolean;
    /** Where its admin HTTP listener (/metrics, /v1/health) answers, host:port (record version 2; absent: null). */
    readonly adminAddress?: string | null;
  }
  | { readonly type: 'unregisterBroker'; readonly brokerId: number; readonly brokerEpoch: number }
  | {
    readonly type: 'brokerRegistrationChange';
    readonly brokerId: number;
    readonly brokerEpoch: number;
    readonly fenced: FencingChange;
    /** True marks the broker in controlled shutdown; false leaves the mark as it is (KRaft: 0 same, 1 yes). */
    readonly inControlledShutdown: boolean;
    /** True ends the broker's warm-up; false or absent leaves it as it is (record version 1). */
    readonly warmed?: boolean;
  }
  | { readonly type: 'topic'; readonly name: string; readonly topicId: string }
  | ({ readonly type: 'partition' } & PartitionRecord)
  | {
    /** Only the fields that change; null (leader: LEADER_UNCHANGED) leaves a field as it is. */
    readonly type: 'partitionChange';
    readonly topicId: string;
    readonly partition: number;
    readonly leader: number;
    readonly isr: readonly number[] | null;
    readonly replicas: readonly number[] | null;
    readonly removingReplicas: readonly number[] | null;
    readonly addingReplicas: readonly number[] | null;
  }
  | {
    readonly type: 'config';
    readonly resourceType: number;
    readonly resourceName: string;
    readonly name: string;
    /** Null deletes the override. */
    readonly value: string | null;
  }
  | { readonly type: 'producerIds'; readonly brokerId: number; readonly brokerEpoch: number; readonly nextProducerId: number }
  | { readonly type: 'removeTopic'; readonly topicId: string }
  | { readonly type: 'featureLevel'; readonly name: string; readonly featureLevel: number }
  | ({ readonly type: 'userScramCredential'; readonly name: string } & ScramCredential)
  | { readonly type: 'removeUserScramCredential'; readonly name: string; readonly mechanism: ScramMechanism }
  | ({ readonly type: 'accessControlEntry'; readonly id: string } & AclBinding)
  | { readonly type: 'removeAccessControlEntry'; readonly id: string }
  /** Kafka's ClientQuotaRecord: one key of one quota entity; a null value removes it. */
  | { readonly type: 'clientQuota'; readonly entity: QuotaEntity; readonly key: QuotaKey; readonly value: number | null }
  | { readonly type: 'noOp' };

export type MetadataRecordType = MetadataRecord['type'];

/** KRaft's record apiKeys, so a log dump reads like Kafka's. */
const API_KEYS: Readonly<Record<MetadataRecordType, number>> = {
  registerBroker: 0,
  unregisterBroker: 1,
  topic: 2,
  partition: 3,
  config: 4,
  partitionChange: 5,
  removeTopic: 9,
  userScramCredential: 11,
  featureLevel: 12,
  clientQuota: 14,
  producerIds: 15,
  brokerRegistrationChange: 17,
  accessControlEntry: 18,
  removeAccessControlEntry: 19,
  noOp: 20,
  removeUserScramCredential: 22,
};
const TYPES = new Map<number, MetadataRecordType>(Object.entries(API_KEYS).map(([type, key]) => [key, type as MetadataRecordType]));

/**
 * The version of our own encoding each record is written at: 0, except the two broker
 * registration records, at 1 since they carry the warm-up state. A log written before reads
 * them at 0 (no warm-up); a version above these is refused rather than misread.
 */
const VERSIONS: Readonly<Partial<Record<MetadataRecordType, number>>> = { registerBroker: 2, brokerRegistrationChange: 1 };

function versionOf(type: MetadataRecordType): number {
  return VERSIONS[type] ?? 0;
}

/** Bound on the elements of one replica list: more replicas than any cluster has brokers. */
export const MAX_REPLICAS = 1024;
/** Bound on a broker's listeners. */
export const MAX_ENDPOINTS = 64;
/** Bound on a SCRAM user name's characters, and on a credential's salt and key bytes (SHA-512 keys are 64). */
export const MAX_SCRAM_NAME_CHARS = 256;
export const MAX_SCRAM_BYTES = 128;

/** The int8 a SCRAM mechanism is written as (KIP-554's codes: 1 SHA-256, 2 SHA-512). */
function writeMechanism(w: Writer, mechanism: ScramMechanism): void {
  w.int8(SCRAM_MECHANISMS.indexOf(mechanism) + 1);
}

function readMechanism(r: Reader): ScramMechanism {
  const code = r.int8();
  const mechanism = SCRAM_MECHANISMS[code - 1];
  if (mechanism === undefined) throw new ProtocolError(`SCRAM mechanism ${code}`);
  return mechanism;
}

function readScramBytes(r: Reader): Buffer {
  const b = r.compactBytes();
  if (b.length > MAX_SCRAM_BYTES) throw new ProtocolError(`SCRAM field of ${b.length} bytes exceeds ${MAX_SCRAM_BYTES}`);
  // A copy: the credential outlives the batch's buffer.
  return Buffer.from(b);
}

/** An AccessControlEntryRecord's binding, checked as CreateAcls checks it. */
function readBinding(r: Reader): AclBinding {
  const fields = {
    resourceType: r.int8(), resourceName: r.compactString(), patternType: r.int8(), principal: r.compactString(),
    host: r.compactString(), operation: r.int8(), permission: r.int8(),
  };
  try {
    return validBinding(fields);
  } catch (err) {
    throw new ProtocolError(`ACL record: ${(err as Error).message}`);
  }
}

/** A quota entity as Kafka's records carry it: (entity type, name or null for <default>) per part. */
function writeQuotaEntity(w: Writer, e: QuotaEntity): void {
  const parts = quotaEntityParts(e);
  w.uvarint(parts.length);
  for (const p of parts) {
    w.compactString(p.entityType);
    w.compactNullableString(p.entityName);
  }
}

function readQuotaEntity(r: Reader): QuotaEntity {
  const n = r.uvarint();
  if (n < 1 || n > 2) throw new ProtocolError(`quota entity of ${n} parts`);
  let user: string | null | undefined;
  let clientId: string | null | undefined;
  let ip: string | null | undefined;
  for (let i = 0; i < n; i++) {
    const type = r.compactString();
    const name = r.compactNullableString();
    if (type === USER_ENTITY && user === undefined) user = name;
    else if (type === CLIENT_ID_ENTITY && clientId === undefined) clientId = name;
    else if (type === IP_ENTITY && ip === undefined) ip = name;
    else throw new ProtocolError(`quota entity part ${type}`);
  }
  return { ...(user === undefined ? {} : { user }), ...(clientId === undefined ? {} : { clientId }), ...(ip === undefined ? {} : { ip }) };
}

/** Bound on a broker's admin address: a DNS name's 253 chars, brackets, a colon and a port fit. */
export const MAX_ADMIN_ADDRESS_CHARS = 300;

// PartitionChange's presence bits: which of the optional fields follow.
const HAS_LEADER = 1;
const HAS_ISR = 2;
const HAS_REPLICAS = 4;
const HAS_REMOVING = 8;
const HAS_ADDING = 16;
const ALL_CHANGE_BITS = HAS_LEADER | HAS_ISR | HAS_REPLICAS | HAS_REMOVING | HAS_ADDING;

function writeIds(w: Writer, ids: readonly number[]): void {
  w.uvarint(ids.length);
  for (const id of ids) w.varint(id);
}

function readIds(r: Reader): number[] {
  const n = r.uvarint();
  if (n > MAX_REPLICAS) throw new ProtocolError(`replica list of ${n} exceeds ${MAX_REPLICAS}`);
  r.checkCount(n, 1);
  const ids = new Array<number>(n);
  for (let i = 0; i < n; i++) ids[i] = r.varint();
  return ids;
}

export function writeRecord(w: Writer, rec: MetadataRecord): void {
  w.uvarint(API_KEYS[rec.type]);
  w.uvarint(versionOf(rec.type));
  switch (rec.type) {
    case 'registerBroker':
      w.varint(rec.brokerId);
      w.uuid(rec.incarnationId);
      w.varlong(rec.brokerEpoch);
      w.uvarint(rec.endpoints.length);
      for (const e of rec.endpoints) {
        w.compactString(e.name);
        w.compactString(e.host);
        w.uvarint(e.port);
        w.int8(e.securityProtocol);
      }
      w.compactNullableString(rec.rack);
      w.bool(rec.fenced);
      w.bool(rec.inControlledShutdown);
      w.bool(rec.warming === true);
      w.compactNullableString(rec.adminAddress ?? null);
      return;
    case 'unregisterBroker':
      w.varint(rec.brokerId);
      w.varlong(rec.brokerEpoch);
      return;
    case 'brokerRegistrationChange':
      w.varint(rec.brokerId);
      w.varlong(rec.brokerEpoch);
      w.int8(rec.fenced);
      w.bool(rec.inControlledShutdown);
      w.bool(rec.warmed === true);
      return;
    case 'topic':
      w.compactString(rec.name);
      w.uuid(rec.topicId);
      return;
    case 'partition':
      w.uuid(rec.topicId);
      w.varint(rec.partition);
      writeIds(w, rec.replicas);
      writeIds(w, rec.isr);
      writeIds(w, rec.removingReplicas);
      writeIds(w, rec.addingReplicas);
      w.varint(rec.leader);
      w.varint(rec.leaderEpoch);
      w.varint(rec.partitionEpoch);
      return;
    case 'partitionChange': {
      w.uuid(rec.topicId);
      w.varint(rec.partition);
      const bits = (rec.leader !== LEADER_UNCHANGED ? HAS_LEADER : 0) | (rec.isr !== null ? HAS_ISR : 0) |
        (rec.replicas !== null ? HAS_REPLICAS : 0) | (rec.removingReplicas !== null ? HAS_REMOVING : 0) |
        (rec.addingReplicas !== null ? HAS_ADDING : 0);
      w.uvarint(bits);
      if (rec.leader !== LEADER_UNCHANGED) w.varint(rec.leader);
      if (rec.isr !== null) writeIds(w, rec.isr);
      if (rec.replicas !== null) writeIds(w, rec.replicas);
      if (rec.removingReplicas !== null) writeIds(w, rec.removingReplicas);
      if (rec.addingReplicas !== null) writeIds(w, rec.addingReplicas);
      return;
    }
    case 'config':
      w.varint(rec.resourceType);
      w.compactString(rec.resourceName);
      w.compactString(rec.name);
      w.compactNullableString(rec.value);
      return;
    case 'producerIds':
      w.varint(rec.brokerId);
      w.varlong(rec.brokerEpoch);
      w.varlong(rec.nextProducerId);
      return;
    case 'removeTopic':
      w.uuid(rec.topicId);
      return;
    case 'featureLevel':
      w.compactString(rec.name);
      w.varint(rec.featureLevel);
      return;
    case 'userScramCredential':
      w.compactString(rec.name);
      writeMechanism(w, rec.mechanism);
      w.compactBytes(rec.salt);
      w.compactBytes(rec.storedKey);
      w.compactBytes(rec.serverKey);
      w.varint(rec.iterations);
      return;
    case 'removeUserScramCredential':
      w.compactString(rec.name);
      writeMechanism(w, rec.mechanism);
      return;
    case 'accessControlEntry':
      w.uuid(rec.id);
      w.int8(rec.resourceType);
      w.compactString(rec.resourceName);
      w.int8(rec.patternType);
      w.compactString(rec.principal);
      w.compactString(rec.host);
      w.int8(rec.operation);
      w.int8(rec.permission);
      return;
    case 'removeAccessControlEntry':
      w.uuid(rec.id);
      return;
    case 'clientQuota':
      writeQuotaEntity(w, rec.entity);
      w.compactString(rec.key);
      w.bool(rec.value === null);
      w.float64(rec.value ?? 0);
      return;
    case 'noOp':
      return;
  }
}

function readFencing(r: Reader): FencingChange {
  const v = r.int8();
  if (v !== -1 && v !== 0 && v !== 1) throw new ProtocolError(`fencing change ${v}`);
  return v;
}

/** The next record of `r`; throws ProtocolError on bad bytes. */
function readRecord(r: Reader): MetadataRecord {
  const apiKey = r.uvarint();
  const type = TYPES.get(apiKey);
  if (type === undefined) throw new ProtocolError(`unknown metadata record apiKey ${apiKey}`);
  const version = r.uvarint();
  if (version > versionOf(type)) throw new ProtocolError(`metadata record ${type} at unsupported version ${version}`);
  switch (type) {
    case 'registerBroker': {
      const brokerId = r.varint();
      const incarnationId = r.uuid();
      const brokerEpoch = r.varlong();
      const n = r.uvarint();
      if (n > MAX_ENDPOINTS) throw new ProtocolError(`${n} endpoints exceed ${MAX_ENDPOINTS}`);
      r.checkCount(n, 4);
      const endpoints: BrokerEndpointRecord[] = [];
      for (let i = 0; i < n; i++) {
        endpoints.push({ name: r.compactString(), host: r.compactString(), port: r.uvarint(), securityProtocol: r.int8() });
      }
      const rack = r.compactNullableString();
      const fenced = r.bool();
      const inControlledShutdown = r.bool();
      const warming = version >= 1 && r.bool();
      const adminAddress = version >= 2 ? r.compactNullableString() : null;
      return { type, brokerId, incarnationId, brokerEpoch, endpoints, rack, fenced, inControlledShutdown, warming, adminAddress };
    }
    case 'unregisterBroker':
      return { type, brokerId: r.varint(), brokerEpoch: r.varlong() };
    case 'brokerRegistrationChange': {
      const brokerId = r.varint();
      const brokerEpoch = r.varlong();
      const fenced = readFencing(r);
      const inControlledShutdown = r.bool();
      return { type, brokerId, brokerEpoch, fenced, inControlledShutdown, warmed: version >= 1 && r.bool() };
    }
    case 'topic':
      return { type, name: r.compactString(), topicId: r.uuid() };
    case 'partition':
      return {
        type, topicId: r.uuid(), partition: r.varint(),
        replicas: readIds(r), isr: readIds(r), removingReplicas: readIds(r), addingReplicas: readIds(r),
        leader: r.varint(), leaderEpoch: r.varint(), partitionEpoch: r.varint(),
      };
    case 'partitionChange': {
      const topicId = r.uuid();
      const partition = r.varint();
      const bits = r.uvarint();
      if ((bits & ~ALL_CHANGE_BITS) !== 0) throw new ProtocolError(`partition change presence bits ${bits}`);
      const leader = (bits & HAS_LEADER) !== 0 ? r.varint() : LEADER_UNCHANGED;
      if ((bits & HAS_LEADER) !== 0 && leader === LEADER_UNCHANGED) throw new ProtocolError('partition change names leader -2');
      return {
        type, topicId, partition, leader,
        isr: (bits & HAS_ISR) !== 0 ? readIds(r) : null,
        replicas: (bits & HAS_REPLICAS) !== 0 ? readIds(r) : null,
        removingReplicas: (bits & HAS_REMOVING) !== 0 ? readIds(r) : null,
        addingReplicas: (bits & HAS_ADDING) !== 0 ? readIds(r) : null,
      };
    }
    case 'config':
      return { type, resourceType: r.varint(), resourceName: r.compactString(), name: r.compactString(), value: r.compactNullableString() };
    case 'producerIds':
      return { type, brokerId: r.varint(), brokerEpoch: r.varlong(), nextProducerId: r.varlong() };
    case 'removeTopic':
      return { type, topicId: r.uuid() };
    case 'featureLevel':
      return { type, name: r.compactString(), featureLevel: r.varint() };
    case 'userScramCredential':
      return { type, name: r.compactString(), mechanism: readMechanism(r), salt: readScramBytes(r), storedKey: readScramBytes(r), serverKey: readScramBytes(r), iterations: r.varint() };
    case 'removeUserScramCredential':
      return { type, name: r.compactString(), mechanism: readMechanism(r) };
    case 'accessControlEntry':
      return { type, id: r.uuid(), ...readBinding(r) };
    case 'removeAccessControlEntry':
      return { type, id: r.uuid() };
    case 'clientQuota': {
      const entity = readQuotaEntity(r);
      const key = r.compactString();
      if (!isQuotaKey(key)) throw new ProtocolError(`quota key ${key}`);
      const remove = r.bool();
      const value = r.float64();
      return { type, entity, key, value: remove ? null : value };
    }
    case 'noOp':
      return { type };
  }
}

/** One batch's bytes: the records of one Raft `data` entry. */
export function encodeBatch(records: readonly MetadataRecord[]): Buffer {
  const w = new Writer(64 + records.length * 32);
  w.uvarint(records.length);
  for (const rec of records) writeRecord(w, rec);
  const chunks = w.finish();
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
}

function asBuffer(data: Uint8Array): Buffer {
  return Buffer.isBuffer(data) ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength);
}

/**
 * Calls `visit` with each record of a batch in order, without collecting them (a snapshot's one
 * batch holds a record per partition). Bad bytes throw CORRUPT_MESSAGE before or while visiting:
 * a caller that must apply a batch atomically visits into a delta it drops on error.
 */
export function forEachRecord(data: Uint8Array, visit: (rec: MetadataRecord) => void): void {
  const r = new Reader(asBuffer(data));
  const n = decoding(() => {
    const count = r.uvarint();
    // The smallest record (NoOp) takes two bytes.
    r.checkCount(count, 2);
    return count;
  });
  for (let i = 0; i < n; i++) visit(decoding(() => readRecord(r)));
  if (r.remaining() !== 0) throw new KafkaError(ErrorCode.CORRUPT_MESSAGE, `metadata batch: ${r.remaining()} bytes after the last record`);
}

/** Runs one read, turning the reader's errors into CORRUPT_MESSAGE (errors of `visit` pass unchanged). */
function decoding<T>(read: () => T): T {
  try {
    return read();
  } catch (err) {
    if (err instanceof ProtocolError) throw new KafkaError(ErrorCode.CORRUPT_MESSAGE, `metadata batch: ${err.reason}`);
    throw err;
  }
}

export function decodeBatch(data: Uint8Array): MetadataRecord[] {
  const out: MetadataRecord[] = [];
  forEachRecord(data, (rec) => out.push(rec));
  return out;
}
