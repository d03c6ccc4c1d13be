// Metadata images as plain values for deepStrictEqual, and generated record sequences that
// apply cleanly (each record valid against the image the ones before it built). Test-only.
import fc from 'fast-check';
import { SCRAM_MECHANISMS } from '../../src/common/sasl_mechanisms.js';
import { AclOperation, AclPermission, PatternType, ResourceType } from '../../src/coordinator/acl/acl.js';
import type { MetadataImage } from '../../src/cluster/metadata/image.js';
import { ConfigResource, type MetadataRecord } from '../../src/cluster/metadata/records.js';

/** The image's content, ordered, without the sharing: two equal images describe equally. */
export function describeImage(image: MetadataImage): unknown {
  const sorted = <K, V>(m: ReadonlyMap<K, V>): [K, V][] => [...m].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const topics = sorted(image.topicsByName).map(([name, t]) => ({
    name, id: t.id, partitions: t.partitions, configs: { ...t.configs },
    table: Array.from({ length: t.table.count }, (_, p) => t.table.state(p)),
  }));
  const byId = sorted(image.topicsById).map(([id, t]) => [id, t.name]);
  return {
    provenance: image.provenance,
    features: sorted(image.features),
    brokers: sorted(image.brokers),
    topics,
    byId,
    configs: sorted(image.configs).map(([k, c]) => [k, { ...c }]),
    producerIds: image.producerIds,
    scram: sorted(image.scram),
    acls: sorted(image.acls),
  };
}

export const uuidArb = fc.uint8Array({ minLength: 16, maxLength: 16 }).map((b) => Buffer.from(b).toString('hex'));

/** Instructions interpreted against a model of the image; every one yields records that apply. */
type Op =
  | ['register', number, boolean, number]
  | ['change', number, -1 | 0 | 1, boolean]
  | ['unregister', number]
  | ['topic', number, number, string]
  | ['partitions', number, number]
  | ['partitionChange', number, number, number, number[] | null, number[] | null]
  | ['config', boolean, number, string, string | null]
  | ['producerIds', number]
  | ['removeTopic', number]
  | ['feature', number, number]
  | ['scram', number, number, boolean]
  | ['acl', number, boolean]
  | ['noOp'];

const ids = fc.array(fc.integer({ min: 0, max: 7 }), { maxLength: 4 });
const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.tuple(fc.constant('register' as const), fc.integer({ min: 0, max: 5 }), fc.boolean(), fc.integer({ min: 0, max: 3 })),
  fc.tuple(fc.constant('change' as const), fc.nat(), fc.constantFrom(-1 as const, 0 as const, 1 as const), fc.boolean()),
  fc.tuple(fc.constant('unregister' as const), fc.nat()),
  fc.tuple(fc.constant('topic' as const), fc.integer({ min: 0, max: 5 }), fc.integer({ min: 0, max: 6 }), uuidArb),
  fc.tuple(fc.constant('partitions' as const), fc.nat(), fc.integer({ min: 1, max: 3 })),
  fc.tuple(fc.constant('partitionChange' as const), fc.nat(), fc.nat(), fc.integer({ min: -2, max: 7 }), fc.option(ids), fc.option(ids)),
  fc.tuple(fc.constant('config' as const), fc.boolean(), fc.integer({ min: 0, max: 5 }), fc.constantFrom('retention.ms', 'cleanup.policy'), fc.option(fc.constantFrom('1', 'delete', 'compact'))),
  fc.tuple(fc.constant('producerIds' as const), fc.integer({ min: 1, max: 5000 })),
  fc.tuple(fc.constant('removeTopic' as const), fc.nat()),
  fc.tuple(fc.constant('feature' as const), fc.integer({ min: 0, max: 2 }), fc.integer({ min: 0, max: 3 })),
  fc.tuple(fc.constant('scram' as const), fc.integer({ min: 0, max: 3 }), fc.integer({ min: 0, max: 1 }), fc.boolean()),
  fc.tuple(fc.constant('acl' as const), fc.integer({ min: 0, max: 5 }), fc.boolean()),
  fc.constant(['noOp'] as Op),
);

/** Valid record sequences: brokers come and go, topics are created, grown, changed and removed. */
export const recordsArb: fc.Arbitrary<MetadataRecord[]> = fc.array(opArb, { maxLength: 60 }).map((ops) => {
  const brokers = new Map<number, number>();
  const credentials = new Set<string>();
  const acls = new Set<string>();
  const topics: { name: string; id: string; count: number }[] = [];
  const out: MetadataRecord[] = [];
  let nextPid = 0;
  const pick = <T>(xs: readonly T[], i: number): T | undefined => (xs.length === 0 ? undefined : xs[i % xs.length]);
  for (const op of ops) {
    const epoch = out.length;
    switch (op[0]) {
      case 'register':
        brokers.set(op[1], epoch);
        out.push({
          type: 'registerBroker', brokerId: op[1], incarnationId: op[1].toString(16).padStart(32, '0'), brokerEpoch: epoch,
          endpoints: [{ name: 'PLAINTEXT', host: `h${op[1]}`, port: 9092 + op[1], securityProtocol: 0 }],
          rack: op[3] === 0 ? null : `r${op[3]}`, fenced: op[2], inControlledShutdown: false,
        });
        break;
      case 'change': case 'unregister': {
        const id = pick([...brokers.keys()], op[1]);
        if (id === undefined) break;
        if (op[0] === 'unregister') {
          out.push({ type: 'unregisterBroker', brokerId: id, brokerEpoch: brokers.get(id)! });
          brokers.delete(id);
        } else {
          out.push({ type: 'brokerRegistrationChange', brokerId: id, brokerEpoch: brokers.get(id)!, fenced: op[2], inControlledShutdown: op[3] });
        }
        break;
      }
      case 'topic': {
        const name = `t${op[1]}`;
        if (topics.some((t) => t.name === name || t.id === op[3])) break;
        topics.push({ name, id: op[3], count: 0 });
        out.push({ type: 'topic', name, topicId: op[3] });
        addPartitions(topics[topics.length - 1]!, op[2], out);
        break;
      }
      case 'partitions': {
        const t = pick(topics, op[1]);
        if (t !== undefined) addPartitions(t, op[2], out);
        break;
      }
      case 'partitionChange': {
        const t = pick(topics, op[1]);
        if (t === undefined || t.count === 0) break;
        out.push({ type: 'partitionChange', topicId: t.id, partition: op[2] % t.count, leader: op[3], isr: op[4], replicas: op[5], removingReplicas: null, addingReplicas: null });
        break;
      }
      case 'config':
        out.push({ type: 'config', resourceType: op[1] ? ConfigResource.TOPIC : ConfigResource.BROKER, resourceName: op[1] ? `t${op[2]}` : String(op[2]), name: op[3], value: op[4] });
        break;
      case 'producerIds':
        nextPid += op[1];
        out.push({ type: 'producerIds', brokerId: 0, brokerEpoch: 0, nextProducerId: nextPid });
        break;
      case 'removeTopic': {
        const t = pick(topics, op[1]);
        if (t === undefined) break;
        topics.splice(topics.indexOf(t), 1);
        out.push({ type: 'removeTopic', topicId: t.id });
        break;
      }
      case 'feature':
        out.push({ type: 'featureLevel', name: `f${op[1]}`, featureLevel: op[2] });
        break;
      case 'scram': {
        const name = `u${op[1]}`;
        const mechanism = SCRAM_MECHANISMS[op[2]]!;
        const key = `${mechanism}:${name}`;
        if (op[3] && credentials.has(key)) {
          credentials.delete(key);
          out.push({ type: 'removeUserScramCredential', name, mechanism });
        } else {
          credentials.add(key);
          const bytes = Buffer.alloc(op[2] === 0 ? 32 : 64, out.length);
          out.push({ type: 'userScramCredential', name, mechanism, salt: Buffer.from([out.length & 0xff, 1]), storedKey: bytes, serverKey: bytes, iterations: 4096 + out.length });
        }
        break;
      }
      case 'acl': {
        const id = (op[1] + 1).toString(16).padStart(32, '0');
        if (op[2] && acls.has(id)) {
          acls.delete(id);
          out.push({ type: 'removeAccessControlEntry', id });
        } else {
          acls.add(id);
          out.push({
            type: 'accessControlEntry', id, resourceType: ResourceType.TOPIC, resourceName: `t${out.length}`, patternType: op[1] % 2 === 0 ? PatternType.LITERAL : PatternType.PREFIXED,
            principal: `User:u${op[1]}`, host: '*', operation: AclOperation.READ, permission: op[2] ? AclPermission.DENY : AclPermission.ALLOW,
          });
        }
        break;
      }
      case 'noOp':
        out.push({ type: 'noOp' });
        break;
    }
  }
  return out;
});

function addPartitions(t: { id: string; count: number }, n: number, out: MetadataRecord[]): void {
  for (let i = 0; i < n; i++, t.count++) {
    const replicas = [t.count % 3, (t.count + 1) % 3];
    out.push({
      type: 'partition', topicId: t.id, partition: t.count, replicas, isr: t.count % 2 === 0 ? replicas : [replicas[0]!],
      removingReplicas: [], addingReplicas: i === 1 ? [5] : [], leader: replicas[0]!, leaderEpoch: 0, partitionEpoch: 0,
    });
  }
}
