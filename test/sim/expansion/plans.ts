// Inputs for the expansion simulation: a seeded cluster of any size (brokers on racks
// "az<a>/r<r>", partitions with skewed sizes and byte rates) to plan with the real planner and
// Kafka's `--generate` (src/cluster/expansion/planner.ts). Tests and bench only.
import type { BrokerSpec, PartitionSpec, PlanInput } from '../../../src/cluster/expansion/model.js';
import { mulberry32 as random } from '../../helpers/seeded_random.js';

export interface ClusterShape {
  readonly brokers: number;
  readonly added: number;
  readonly partitions: number;
  readonly replication: number;
  /** Racks, spread over three AZs; at least the replication factor. */
  readonly racks: number;
  readonly seed: number;
  readonly meanSizeBytes: number;
  readonly meanBytesInPerSec: number;
}

const rackOf = (id: number, racks: number): string => `az${(id % racks) % 3}/r${id % racks}`;

/**
 * `brokers` old brokers holding every partition (replicas on consecutive ids, so on distinct racks)
 * and `added` empty ones. Sizes: uniform³ (most small, a few large) around the mean; byte rates:
 * uniform⁴ (a long hot tail) plus a floor.
 */
export function clusterInput(shape: ClusterShape): PlanInput {
  const rnd = random(shape.seed);
  const brokers: BrokerSpec[] = [];
  for (let id = 0; id < shape.brokers + shape.added; id++) brokers.push({ id, rack: rackOf(id, shape.racks), capacity: 1 });
  const partitions: PartitionSpec[] = [];
  for (let i = 0; i < shape.partitions; i++) {
    const first = i % shape.brokers;
    const replicas = Array.from({ length: shape.replication }, (_, j) => (first + j) % shape.brokers);
    partitions.push({
      topic: `t${i % 100}`,
      partition: Math.floor(i / 100),
      replicas,
      leader: replicas[0]!,
      sizeBytes: Math.round(shape.meanSizeBytes * 4 * rnd() ** 3),
      bytesInPerSec: Math.round(shape.meanBytesInPerSec * (0.5 + 2.5 * rnd() ** 4)),
    });
  }
  return { brokers, removing: [], partitions };
}
