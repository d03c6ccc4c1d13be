// Small helpers over TopicPartition lists shared by the consumer's modules: a string key per
// partition, grouping by topic, set differences. Pure; runs on the consumer's thread.
import type { TopicPartition } from './types.js';

/** "topic\0partition": NUL cannot appear in a topic name, so keys never collide. */
export function tpKey(topic: string, partition: number): string {
  return `${topic}\0${partition}`;
}

export function keyOf(tp: TopicPartition): string {
  return tpKey(tp.topic, tp.partition);
}

/** Partitions grouped by topic, in first-seen topic order. */
export function byTopic<T extends TopicPartition>(items: readonly T[]): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const it of items) {
    const list = out.get(it.topic);
    if (list === undefined) out.set(it.topic, [it]);
    else list.push(it);
  }
  return out;
}

/** The partitions of `a` that are not in `b`. */
export function minus(a: readonly TopicPartition[], b: readonly TopicPartition[]): TopicPartition[] {
  const drop = new Set(b.map(keyOf));
  return a.filter((tp) => !drop.has(keyOf(tp)));
}

/** Plain {topic, partition} copies, sorted by topic then partition, without duplicates. */
export function normalized(items: readonly TopicPartition[]): TopicPartition[] {
  const seen = new Map<string, TopicPartition>();
  for (const { topic, partition } of items) seen.set(tpKey(topic, partition), { topic, partition });
  return [...seen.values()].sort((x, y) => (x.topic < y.topic ? -1 : x.topic > y.topic ? 1 : x.partition - y.partition));
}
