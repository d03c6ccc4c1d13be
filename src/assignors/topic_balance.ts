// Uniform assignment for heterogeneous subscriptions (members subscribe to different topics).
// Works on counts first: how many partitions of topic t each subscriber gets. Starting from what
// members already own, each topic in turn is "re-levelled": its n partitions are water-filled onto
// its subscribers given their load from other topics, so that afterwards every member holding a
// partition of t has at most one more partition in total than any subscriber of t. Ties keep the
// current holder (stickiness). Passes repeat until no topic changes: each change strictly lowers
// the sum of squared loads, so this terminates; MAX_PASSES only bounds pathological inputs.
// Then each topic's partitions are filled stickily to those counts. Pure; runs on the group's shard.
import { fillPool, subscribersByTopic, type PartitionLayout } from './partition_layout.js';

const MAX_PASSES = 64;

interface TopicCounts {
  readonly subscribers: Int32Array;
  /** Partitions of the topic per subscriber, aligned with `subscribers`. */
  readonly counts: Int32Array;
  readonly partitions: number;
  assigned: number;
}

export function balanceAcrossTopics(layout: PartitionLayout): void {
  const { base, members } = layout;
  const load = new Int32Array(members.length);
  const topics = initialCounts(layout, load);
  const maxSubscribers = topics.reduce((max, t) => Math.max(max, t.subscribers.length), 0);
  const scratch = { bases: new Int32Array(maxSubscribers), order: new Int32Array(maxSubscribers), next: new Int32Array(maxSubscribers) };
  for (let pass = 0; pass < MAX_PASSES; pass++) {
    let changed = false;
    for (const topic of topics) {
      if (!isLevel(topic, load) && relevel(topic, load, scratch)) changed = true;
    }
    if (!changed) break;
  }
  const quota = new Int32Array(members.length);
  const kept = new Int32Array(members.length);
  topics.forEach((topic, t) => {
    for (let i = 0; i < topic.subscribers.length; i++) quota[topic.subscribers[i]!] = topic.counts[i]!;
    fillPool(layout, base[t]!, base[t + 1]!, topic.subscribers, quota, kept);
  });
}

function initialCounts(layout: PartitionLayout, load: Int32Array): TopicCounts[] {
  const { owner, base } = layout;
  const position = new Int32Array(layout.members.length);
  return subscribersByTopic(layout).map((subscribers, t) => {
    const counts = new Int32Array(subscribers.length);
    for (let i = 0; i < subscribers.length; i++) position[subscribers[i]!] = i;
    let assigned = 0;
    for (let s = base[t]!; s < base[t + 1]!; s++) {
      const m = owner[s]!;
      if (m < 0) continue;
      counts[position[m]!]!++;
      load[m]!++;
      assigned++;
    }
    return { subscribers, counts, partitions: base[t + 1]! - base[t]!, assigned };
  });
}

/** All partitions handed out and no holder more than one above the least-loaded subscriber. */
function isLevel(topic: TopicCounts, load: Int32Array): boolean {
  if (topic.assigned !== topic.partitions) return false;
  let minLoad = Infinity;
  let maxHolder = -Infinity;
  for (let i = 0; i < topic.subscribers.length; i++) {
    const l = load[topic.subscribers[i]!]!;
    if (l < minLoad) minLoad = l;
    if (topic.counts[i]! > 0 && l > maxHolder) maxHolder = l;
  }
  return maxHolder <= minLoad + 1;
}

/** Water-fills the topic's partitions over its subscribers; returns whether any count changed. */
function relevel(topic: TopicCounts, load: Int32Array, scratch: { bases: Int32Array; order: Int32Array; next: Int32Array }): boolean {
  const { subscribers, counts, partitions } = topic;
  const k = subscribers.length;
  const { bases, next } = scratch;
  const order = scratch.order.subarray(0, k);
  for (let i = 0; i < k; i++) {
    bases[i] = load[subscribers[i]!]! - counts[i]!;
    order[i] = i;
  }
  order.sort((a, b) => bases[a]! - bases[b]! || a - b);
  // The lowest `filled` subscribers are raised to `level`; the others already sit above it.
  let filled = 1;
  let prefix = bases[order[0]!]!;
  while (filled < k && filled * bases[order[filled]!]! - prefix <= partitions) prefix += bases[order[filled++]!]!;
  const level = Math.floor((partitions + prefix) / filled);
  let extra = partitions - (filled * level - prefix);
  next.fill(0, 0, k);
  for (let r = 0; r < filled; r++) next[order[r]!] = level - bases[order[r]!]!;
  for (let r = 0; r < filled && extra > 0; r++) {
    const i = order[r]!;
    if (counts[i]! > next[i]!) { next[i]!++; extra--; }
  }
  for (let r = 0; r < filled && extra > 0; r++) {
    const i = order[r]!;
    if (next[i] === level - bases[i]!) { next[i]!++; extra--; }
  }
  let changed = false;
  for (let i = 0; i < k; i++) {
    if (next[i] === counts[i]) continue;
    changed = true;
    load[subscribers[i]!]! += next[i]! - counts[i]!;
    counts[i] = next[i]!;
  }
  topic.assigned = partitions;
  return changed;
}
