// The metadata image: everything the cluster metadata log says at one offset (brokers, topics
// and their partitions, configs, the next producer-id block, feature levels, SCRAM credentials, ACLs,
// client quotas), immutable, so a
// reader holding one image sees one consistent version while the next is built. A delta
// (delta.ts) makes the next image sharing every unchanged part with this one: an untouched
// topic, its partition table and the map buckets nobody changed are the same objects. Pure; any thread.
import type { OffsetAndEpoch } from '../../coordinator/raft/types.js';
import type { TopicImage } from '../cluster_view.js';
import type { PartitionTable } from './partitions.js';
import { SharedMap } from './shared_map.js';
import type { BrokerEndpointRecord } from './records.js';
import type { ScramCredential, ScramMechanism } from '../../common/sasl_mechanisms.js';
import type { AclBinding } from '../../coordinator/acl/acl.js';

/** An ACL as the metadata holds it: the binding and the id its records name it by. */
export type StoredAcl = AclBinding & { readonly id: string };
import type { QuotaValues } from '../../coordinator/client_quotas.js';

export interface BrokerRegistration {
  readonly id: number;
  readonly incarnationId: string;
  /** The offset of its registration record: a heartbeat naming another epoch is stale. */
  readonly epoch: number;
  readonly endpoints: readonly BrokerEndpointRecord[];
  readonly rack: string | null;
  readonly fenced: boolean;
  readonly inControlledShutdown: boolean;
  /** New to the cluster and not yet warm: leads only partitions no warm replica can (warm_up.ts on the broker). */
  readonly warming: boolean;
  /** Its admin HTTP listener, host:port; null when it registered none (an older broker). */
  readonly adminAddress: string | null;
}

/** A topic in the image: ClusterView's TopicImage plus its partition table. */
export interface MetaTopic extends TopicImage {
  readonly table: PartitionTable;
}

export interface ProducerIdsImage {
  /** The first id of the next block the controller hands out. */
  readonly nextProducerId: number;
  /** The broker (and its epoch) that took the latest block; -1 before any. */
  readonly brokerId: number;
  readonly brokerEpoch: number;
}

/** The key of a config resource in MetadataImage.configs. */
export function configKey(resourceType: number, resourceName: string): string {
  return `${resourceType}:${resourceName}`;
}

/** The key of a user's credential for one mechanism in MetadataImage.scram. */
export function scramKey(mechanism: ScramMechanism, user: string): string {
  return `${mechanism}:${user}`;
}

export type Configs = Readonly<Record<string, string>>;

export const NO_CONFIGS: Configs = Object.freeze({});

export class MetadataImage {
  static readonly EMPTY = new MetadataImage(
    { endOffset: 0, epoch: 0 }, SharedMap.empty(), SharedMap.empty(), SharedMap.empty(), SharedMap.empty(), SharedMap.empty(),
    { nextProducerId: 0, brokerId: -1, brokerEpoch: -1 }, SharedMap.empty(), SharedMap.empty(), SharedMap.empty(),
  );

  constructor(
    /** The log position this image reflects: every batch below `endOffset` is in it. */
    readonly provenance: OffsetAndEpoch,
    readonly features: SharedMap<string, number>,
    readonly brokers: SharedMap<number, BrokerRegistration>,
    readonly topicsByName: SharedMap<string, MetaTopic>,
    readonly topicsById: SharedMap<string, MetaTopic>,
    /** Overrides per resource (configKey), topics' included: a topic's are also its MetaTopic.configs. */
    readonly configs: SharedMap<string, Configs>,
    readonly producerIds: ProducerIdsImage,
    /** SCRAM credentials by scramKey (salted and iterated; never a password), as UserScramCredentialRecords set them. */
    readonly scram: SharedMap<string, ScramCredential & { readonly user: string }>,
    /** ACLs by id, as AccessControlEntryRecords set them; a new map object whenever one changes. */
    readonly acls: SharedMap<string, StoredAcl>,
    /** Client quotas by quotaEntityKey, as ClientQuotaRecords set them (an entity with no value left is dropped). */
    readonly quotas: SharedMap<string, QuotaValues>,
  ) {}

  partitionCount(): number {
    let n = 0;
    for (const t of this.topicsById.values()) n += t.table.count;
    return n;
  }
}

export function makeTopic(name: string, id: string, configs: Configs, table: PartitionTable): MetaTopic {
  return { name, id, configs, table, partitions: table.count };
}
