// The replica lists of KIP-73's topic configs `leader.replication.throttled.replicas` and
// `follower.replication.throttled.replicas`: "*" (every replica of the topic), or a comma list of
// partition:brokerId pairs, or empty (none). Pure; used on main (validation, the fetch handler,
// the reconciler) and by the controller's validation.

/** Which (partition, broker) replicas of one topic a throttle applies to. */
export interface ThrottledReplicas {
  has(partition: number, brokerId: number): boolean;
}

const NONE: ThrottledReplicas = { has: () => false };
const ALL: ThrottledReplicas = { has: () => true };
const PAIR = /^\s*(\d{1,10}):(\d{1,10})\s*$/;
const MAX_INT32 = 0x7fffffff;

/** The pairs of a list value, or null when it is not a valid list. */
function pairsOf(value: string): [number, number][] | null {
  const pairs: [number, number][] = [];
  for (const item of value.split(',')) {
    const m = PAIR.exec(item);
    if (m === null) return null;
    const partition = Number(m[1]);
    const broker = Number(m[2]);
    if (partition > MAX_INT32 || broker > MAX_INT32) return null;
    pairs.push([partition, broker]);
  }
  return pairs;
}

/** Whether `value` is "*", empty, or a comma list of partition:brokerId (Kafka's ThrottledReplicaListValidator). */
export function isThrottledReplicaList(value: string): boolean {
  const v = value.trim();
  return v === '' || v === '*' || pairsOf(v) !== null;
}

/** The replicas `value` names; an invalid value (never stored: the controller refuses it) names none. */
export function parseThrottledReplicas(value: string | undefined): ThrottledReplicas {
  const v = value?.trim() ?? '';
  if (v === '') return NONE;
  if (v === '*') return ALL;
  const pairs = pairsOf(v);
  if (pairs === null) return NONE;
  const keys = new Set(pairs.map(([p, b]) => p * 0x80000000 + b));
  return { has: (partition, brokerId) => keys.has(partition * 0x80000000 + brokerId) };
}

/**
 * parseThrottledReplicas memoized per topic config object: images share unchanged topics'
 * config objects between versions, so a fetch parses a list once per change, and the weak map
 * lets a replaced object go.
 */
export class ThrottledReplicaCache {
  private readonly parsed = new WeakMap<object, ThrottledReplicas>();

  constructor(private readonly key: string) {}

  of(configs: Readonly<Record<string, string>>): ThrottledReplicas {
    let r = this.parsed.get(configs);
    if (r === undefined) {
      r = parseThrottledReplicas(configs[this.key]);
      this.parsed.set(configs, r);
    }
    return r;
  }
}
