// Metadata snapshots: an image written as the records that rebuild it, in one batch (features,
// brokers, topics each followed by its configs and partitions, other configs, the producer-id
// block, SCRAM credentials, ACLs, client quotas), and loaded back by replaying that batch onto the empty image. The Raft core stores
// the bytes opaquely (Snapshot.data) with the offset and epoch they reflect. Pure; any thread.
import type { OffsetAndEpoch } from '../../coordinator/raft/types.js';
import { QUOTA_KEYS, quotaEntityOf } from '../../coordinator/client_quotas.js';
import { Writer } from '../../protocol/writer.js';
import { applyEntry } from './delta.js';
import { configKey, MetadataImage } from './image.js';
import { ConfigResource, writeRecord, type MetadataRecord } from './records.js';

function* snapshotRecords(image: MetadataImage): Generator<MetadataRecord> {
  for (const [name, featureLevel] of image.features) yield { type: 'featureLevel', name, featureLevel };
  for (const b of image.brokers.values()) {
    yield {
      type: 'registerBroker', brokerId: b.id, incarnationId: b.incarnationId, brokerEpoch: b.epoch,
      endpoints: b.endpoints, rack: b.rack, fenced: b.fenced, inControlledShutdown: b.inControlledShutdown, warming: b.warming,
      adminAddress: b.adminAddress,
    };
  }
  const topicConfigs = new Set<string>();
  for (const t of image.topicsById.values()) {
    yield { type: 'topic', name: t.name, topicId: t.id };
    for (const [name, value] of Object.entries(t.configs)) {
      yield { type: 'config', resourceType: ConfigResource.TOPIC, resourceName: t.name, name, value };
    }
    topicConfigs.add(configKey(ConfigResource.TOPIC, t.name));
    for (let p = 0; p < t.table.count; p++) yield { type: 'partition', topicId: t.id, partition: p, ...t.table.state(p) };
  }
  for (const [key, configs] of image.configs) {
    if (topicConfigs.has(key)) continue;
    const split = key.indexOf(':');
    const resourceType = Number(key.slice(0, split));
    const resourceName = key.slice(split + 1);
    for (const [name, value] of Object.entries(configs)) yield { type: 'config', resourceType, resourceName, name, value };
  }
  const ids = image.producerIds;
  if (ids.nextProducerId > 0) yield { type: 'producerIds', brokerId: ids.brokerId, brokerEpoch: ids.brokerEpoch, nextProducerId: ids.nextProducerId };
  for (const c of image.scram.values()) {
    yield { type: 'userScramCredential', name: c.user, mechanism: c.mechanism, salt: c.salt, storedKey: c.storedKey, serverKey: c.serverKey, iterations: c.iterations };
  }
  for (const acl of image.acls.values()) yield { type: 'accessControlEntry', ...acl };
  for (const [entityKey, values] of image.quotas) {
    const entity = quotaEntityOf(entityKey);
    for (const key of QUOTA_KEYS) {
      const value = values[key];
      if (value !== undefined) yield { type: 'clientQuota', entity, key, value };
    }
  }
}

/** The snapshot of `image`: one batch of records (forEachRecord reads it). */
export function encodeSnapshot(image: MetadataImage): Buffer {
  const body = new Writer(1 << 20);
  let count = 0;
  for (const rec of snapshotRecords(image)) {
    writeRecord(body, rec);
    count++;
  }
  // The count leads the batch but is known only at the end: it goes in front of the body's chunks.
  const head = new Writer(16);
  head.uvarint(count);
  return Buffer.concat([...head.finish(), ...body.finish()]);
}

/** The image a snapshot holds, at the log position the snapshot was taken (its id). */
export function loadSnapshot(data: Uint8Array, id: OffsetAndEpoch): MetadataImage {
  return applyEntry(MetadataImage.EMPTY, data, id);
}
