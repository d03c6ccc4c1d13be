// What a production group coordinator is built with: random member ids, the consumer
// protocol's subscription decoder (OffsetDelete must know which topics members consume) and
// the KIP-848 groups with their assignors. Simulations build their own deterministic deps.
import { randomBytes, randomUUID } from 'node:crypto';
import { decodeSubscription } from '../../protocol/consumer_protocol.js';
import type { Assignor } from '../../assignors/assignor.js';
import { RangeAssignor } from '../../assignors/range.js';
import { UniformAssignor } from '../../assignors/uniform.js';
import { ConsumerGroup } from './consumer_group.js';
import type { GroupConfig } from './group_api.js';
import type { CoordinatorDeps } from './group_coordinator.js';

function subscribedTopics(protocolType: string, metadata: Uint8Array): readonly string[] | null {
  if (protocolType !== 'consumer') return null;
  try {
    return decodeSubscription(metadata).topics;
  } catch {
    return null;
  }
}

export function coordinatorDeps(config: GroupConfig): CoordinatorDeps {
  const known: Assignor[] = [new UniformAssignor(), new RangeAssignor()];
  const assignors = new Map(known.filter((a) => config.consumerAssignors.includes(a.name)).map((a) => [a.name, a]));
  return {
    config,
    newMemberId: (clientId) => `${clientId}-${randomUUID()}`,
    subscribedTopics,
    // KIP-848 member ids are Kafka Uuids in their base64url text form.
    createConsumerGroup: (groupId) => new ConsumerGroup(groupId, config, assignors, () => randomBytes(16).toString('base64url')),
  };
}
