// Applying committed metadata records to an image: a MetadataDelta replays a batch onto a base
// image and builds the next image, copying only what the batch touches (a map bucket on its
// first change, a topic's partition columns on its first partition change) and sharing the rest.
// A record that contradicts the image (an unknown topic, a stale broker epoch, a gap in a
// topic's partitions) throws INVALID_RECORD; the base image is untouched, so a batch applies
// whole or not at all. Pure; any thread.
import type { OffsetAndEpoch } from '../../coordinator/raft/types.js';
import { ErrorCode, KafkaError } from '../../protocol/errors.js';
import {
  configKey, makeTopic, MetadataImage, NO_CONFIGS, scramKey,
  type BrokerRegistration, type Configs, type MetaTopic, type ProducerIdsImage, type StoredAcl,
} from './image.js';
import { PartitionTable, type PartitionTableBuilder } from './partitions.js';
import type { SharedMapBuilder } from './shared_map.js';
import type { ScramCredential } from '../../common/sasl_mechanisms.js';
import { quotaEntityKey, type QuotaValues } from '../../coordinator/client_quotas.js';
import { ConfigResource, forEachRecord, LEADER_UNCHANGED, type MetadataRecord } from './records.js';

function invalid(message: string): KafkaError {
  return new KafkaError(ErrorCode.INVALID_RECORD, `metadata record does not apply: ${message}`);
}

export class MetadataDelta {
  private readonly features: SharedMapBuilder<string, number>;
  private readonly brokers: SharedMapBuilder<number, BrokerRegistration>;
  private readonly byName: SharedMapBuilder<string, MetaTopic>;
  private readonly byId: SharedMapBuilder<string, MetaTopic>;
  private readonly configs: SharedMapBuilder<string, Configs>;
  private producerIds: ProducerIdsImage;
  private readonly scram: SharedMapBuilder<string, ScramCredential & { readonly user: string }>;
  private readonly acls: SharedMapBuilder<string, StoredAcl>;
  private readonly quotas: SharedMapBuilder<string, QuotaValues>;
  /** Partition tables being changed, by topic id; their topics are rebuilt around them. */
  private readonly tables = new Map<string, PartitionTableBuilder>();

  constructor(readonly base: MetadataImage) {
    this.features = base.features.builder();
    this.brokers = base.brokers.builder();
    this.byName = base.topicsByName.builder();
    this.byId = base.topicsById.builder();
    this.configs = base.configs.builder();
    this.producerIds = base.producerIds;
    this.scram = base.scram.builder();
    this.acls = base.acls.builder();
    this.quotas = base.quotas.builder();
  }

  replay(rec: MetadataRecord): void {
    switch (rec.type) {
      case 'registerBroker':
        if (rec.brokerId < 0) throw invalid(`broker id ${rec.brokerId}`);
        this.brokers.set(rec.brokerId, {
          id: rec.brokerId, incarnationId: rec.incarnationId, epoch: rec.brokerEpoch, endpoints: rec.endpoints,
          rack: rec.rack, fenced: rec.fenced, inControlledShutdown: rec.inControlledShutdown, warming: rec.warming === true,
          adminAddress: rec.adminAddress ?? null,
        });
        return;
      case 'unregisterBroker':
        this.broker(rec.brokerId, rec.brokerEpoch);
        this.brokers.delete(rec.brokerId);
        return;
      case 'brokerRegistrationChange': {
        const b = this.broker(rec.brokerId, rec.brokerEpoch);
        const fenced = rec.fenced === 0 ? b.fenced : rec.fenced === 1;
        this.brokers.set(b.id, { ...b, fenced, inControlledShutdown: b.inControlledShutdown || rec.inControlledShutdown, warming: b.warming && rec.warmed !== true });
        return;
      }
      case 'topic': {
        if (this.byName.get(rec.name) !== undefined) throw invalid(`topic '${rec.name}' exists`);
        if (this.byId.get(rec.topicId) !== undefined) throw invalid(`topic id ${rec.topicId} exists`);
        const configs = this.configs.get(configKey(ConfigResource.TOPIC, rec.name)) ?? NO_CONFIGS;
        const topic = makeTopic(rec.name, rec.topicId, configs, PartitionTable.EMPTY);
        this.byName.set(rec.name, topic);
        this.byId.set(rec.topicId, topic);
        return;
      }
      case 'partition': {
        const table = this.table(rec.topicId);
        if (!Number.isInteger(rec.partition) || rec.partition < 0 || rec.partition > table.count) {
          throw invalid(`partition ${rec.partition} of topic ${rec.topicId}, which has ${table.count}`);
        }
        table.set(rec.partition, rec);
        return;
      }
      case 'partitionChange': {
        const table = this.table(rec.topicId);
        if (!Number.isInteger(rec.partition) || rec.partition < 0 || rec.partition >= table.count) {
          throw invalid(`change of partition ${rec.partition} of topic ${rec.topicId}, which has ${table.count}`);
        }
        const s = table.state(rec.partition);
        // KRaft's epoch rule: every change bumps the partition epoch, a leader change the leader epoch too.
        const leaderSet = rec.leader !== LEADER_UNCHANGED;
        table.set(rec.partition, {
          replicas: rec.replicas ?? s.replicas,
          isr: rec.isr ?? s.isr,
          removingReplicas: rec.removingReplicas ?? s.removingReplicas,
          addingReplicas: rec.addingReplicas ?? s.addingReplicas,
          leader: leaderSet ? rec.leader : s.leader,
          leaderEpoch: leaderSet ? s.leaderEpoch + 1 : s.leaderEpoch,
          partitionEpoch: s.partitionEpoch + 1,
        });
        return;
      }
      case 'config':
        this.replayConfig(rec.resourceType, rec.resourceName, rec.name, rec.value);
        return;
      case 'producerIds':
        if (rec.nextProducerId <= this.producerIds.nextProducerId) {
          throw invalid(`next producer id ${rec.nextProducerId} does not pass ${this.producerIds.nextProducerId}`);
        }
        this.producerIds = { nextProducerId: rec.nextProducerId, brokerId: rec.brokerId, brokerEpoch: rec.brokerEpoch };
        return;
      case 'removeTopic': {
        const t = this.byId.get(rec.topicId);
        if (t === undefined) throw invalid(`removal of unknown topic id ${rec.topicId}`);
        this.byId.delete(t.id);
        this.byName.delete(t.name);
        this.tables.delete(t.id);
        // A topic's configs go with it (a topic created later under the name starts clean).
        this.configs.delete(configKey(ConfigResource.TOPIC, t.name));
        return;
      }
      case 'featureLevel':
        if (rec.featureLevel === 0) this.features.delete(rec.name);
        else this.features.set(rec.name, rec.featureLevel);
        return;
      case 'userScramCredential': {
        const { type: _type, name, ...credential } = rec;
        this.scram.set(scramKey(rec.mechanism, name), { ...credential, user: name });
        return;
      }
      case 'removeUserScramCredential': {
        const key = scramKey(rec.mechanism, rec.name);
        if (this.scram.get(key) === undefined) throw invalid(`user ${rec.name} has no ${rec.mechanism} credential`);
        this.scram.delete(key);
        return;
      }
      case 'accessControlEntry': {
        const { type: _type, ...acl } = rec;
        this.acls.set(acl.id, acl);
        return;
      }
      case 'removeAccessControlEntry':
        if (this.acls.get(rec.id) === undefined) throw invalid(`no ACL has id ${rec.id}`);
        this.acls.delete(rec.id);
        return;
      case 'clientQuota': {
        const key = quotaEntityKey(rec.entity);
        const { [rec.key]: _old, ...rest } = this.quotas.get(key) ?? {};
        const values: QuotaValues = rec.value === null ? rest : { ...rest, [rec.key]: rec.value };
        if (Object.keys(values).length === 0) this.quotas.delete(key);
        else this.quotas.set(key, values);
        return;
      }
      case 'noOp':
        return;
    }
  }

  /** The next image, at `provenance`. */
  apply(provenance: OffsetAndEpoch): MetadataImage {
    for (const [id, builder] of this.tables) {
      const t = this.byId.get(id)!;
      const topic = makeTopic(t.name, t.id, t.configs, builder.build());
      this.byId.set(id, topic);
      this.byName.set(t.name, topic);
    }
    this.tables.clear();
    return new MetadataImage(
      provenance, this.features.build(), this.brokers.build(), this.byName.build(), this.byId.build(),
      this.configs.build(), this.producerIds, this.scram.build(), this.acls.build(), this.quotas.build(),
    );
  }

  private broker(id: number, epoch: number): BrokerRegistration {
    const b = this.brokers.get(id);
    if (b === undefined) throw invalid(`broker ${id} is not registered`);
    if (b.epoch !== epoch) throw invalid(`broker ${id} is at epoch ${b.epoch}, not ${epoch}`);
    return b;
  }

  private table(topicId: string): PartitionTableBuilder {
    let b = this.tables.get(topicId);
    if (b === undefined) {
      const t = this.byId.get(topicId);
      if (t === undefined) throw invalid(`unknown topic id ${topicId}`);
      b = t.table.builder();
      this.tables.set(topicId, b);
    }
    return b;
  }

  private replayConfig(resourceType: number, resourceName: string, name: string, value: string | null): void {
    const key = configKey(resourceType, resourceName);
    const before = this.configs.get(key) ?? NO_CONFIGS;
    if (value === null && !(name in before)) return;
    const after: Record<string, string> = { ...before };
    if (value === null) delete after[name];
    else after[name] = value;
    const configs = Object.keys(after).length === 0 ? NO_CONFIGS : Object.freeze(after);
    if (configs === NO_CONFIGS) this.configs.delete(key);
    else this.configs.set(key, configs);
    const t = resourceType === ConfigResource.TOPIC ? this.byName.get(resourceName) : undefined;
    if (t !== undefined) {
      const topic = makeTopic(t.name, t.id, configs, t.table);
      this.byName.set(t.name, topic);
      this.byId.set(t.id, topic);
    }
  }
}

/** The image after one batch of records. */
export function applyRecords(base: MetadataImage, records: Iterable<MetadataRecord>, provenance: OffsetAndEpoch): MetadataImage {
  const delta = new MetadataDelta(base);
  for (const rec of records) delta.replay(rec);
  return delta.apply(provenance);
}

/** The image after one committed Raft `data` entry (bad bytes: CORRUPT_MESSAGE; records that do not apply: INVALID_RECORD). */
export function applyEntry(base: MetadataImage, data: Uint8Array, provenance: OffsetAndEpoch): MetadataImage {
  const delta = new MetadataDelta(base);
  forEachRecord(data, (rec) => delta.replay(rec));
  return delta.apply(provenance);
}
