// Subscriptions of a KIP-848 group resolved against topic metadata: topic names and (v1) a regex
// per member become the topics the group consumes, with the ids and partition counts the target
// assignment was computed from. Pure; runs on the shard that owns the group.
// Bounds: a member's subscription is at most MAX_SUBSCRIBED_TOPIC_NAMES names and a regex at most
// MAX_TOPIC_REGEX_LENGTH chars (checked on the heartbeat); the resolved metadata only holds topics
// that exist; compiled regexes are cached per distinct regex in use (≤ members).
import type { TopicIndex, TopicInfo } from './group_api.js';

export const MAX_SUBSCRIBED_TOPIC_NAMES = 10_000;
export const MAX_TOPIC_REGEX_LENGTH = 1_000;

/** Kafka never hands internal topics to a regex subscription. */
const INTERNAL_TOPICS: ReadonlySet<string> = new Set(['__consumer_offsets', '__transaction_state']);

/** Topic name → metadata, for the topics some member subscribes to and that exist. */
export type SubscribedTopics = ReadonlyMap<string, TopicInfo>;

export interface Subscriber {
  readonly memberId: string;
  readonly subscribedTopicNames: readonly string[];
  readonly subscribedTopicRegex: string | null;
}

export interface ResolvedSubscriptions {
  readonly metadata: SubscribedTopics;
  /** Every name subscribed by name or matched by a regex, existing or not. */
  readonly names: ReadonlySet<string>;
  /** Per member, the topic ids it consumes; equal subscriptions share one Set. */
  readonly topicIds: ReadonlyMap<string, ReadonlySet<string>>;
}

/**
 * Compiles subscription regexes as Kafka applies them (to the whole topic name) and caches them.
 * JavaScript's engine backtracks where Kafka's RE2/J does not: the length bound is the only guard.
 */
export class TopicRegexes {
  private readonly compiled = new Map<string, RegExp>();

  /** The compiled regex, or null when `source` is not a valid regular expression. Not cached. */
  static compile(source: string): RegExp | null {
    try {
      // Compiling it bare first rejects sources that only parse once wrapped, e.g. "a)|(b".
      new RegExp(source);
      return new RegExp(`^(?:${source})$`);
    } catch {
      return null;
    }
  }

  /** Like compile, cached: only for regexes of members (the cache is pruned to those). */
  memberRegex(source: string): RegExp | null {
    const cached = this.compiled.get(source);
    if (cached !== undefined) return cached;
    const regex = TopicRegexes.compile(source);
    if (regex !== null) this.compiled.set(source, regex);
    return regex;
  }

  /** Drops regexes no member uses any more. */
  retainOnly(inUse: ReadonlySet<string>): void {
    for (const source of this.compiled.keys()) if (!inUse.has(source)) this.compiled.delete(source);
  }
}

export function resolveSubscriptions(members: Iterable<Subscriber>, topics: TopicIndex, regexes: TopicRegexes): ResolvedSubscriptions {
  const matches = new Map<string, readonly string[]>();
  const names = new Set<string>();
  const shared = new Map<string, ReadonlySet<string>>();
  const topicIds = new Map<string, ReadonlySet<string>>();
  for (const member of members) {
    const memberNames = new Set(member.subscribedTopicNames);
    if (member.subscribedTopicRegex !== null) {
      let matched = matches.get(member.subscribedTopicRegex);
      if (matched === undefined) {
        matched = matching(regexes.memberRegex(member.subscribedTopicRegex), topics);
        matches.set(member.subscribedTopicRegex, matched);
      }
      for (const name of matched) memberNames.add(name);
    }
    const ids: string[] = [];
    for (const name of memberNames) {
      names.add(name);
      const info = topics.byName.get(name);
      if (info !== undefined) ids.push(info.id);
    }
    ids.sort();
    const key = ids.join(',');
    let set = shared.get(key);
    if (set === undefined) {
      set = new Set(ids);
      shared.set(key, set);
    }
    topicIds.set(member.memberId, set);
  }
  regexes.retainOnly(new Set(matches.keys()));
  const metadata = new Map<string, TopicInfo>();
  for (const name of [...names].sort()) {
    const info = topics.byName.get(name);
    if (info !== undefined) metadata.set(name, { name, id: info.id, partitions: info.partitions });
  }
  return { metadata, names, topicIds };
}

function matching(regex: RegExp | null, topics: TopicIndex): readonly string[] {
  if (regex === null) return [];
  const out: string[] = [];
  for (const name of topics.byName.keys()) if (!INTERNAL_TOPICS.has(name) && regex.test(name)) out.push(name);
  return out;
}

export function sameMetadata(a: SubscribedTopics, b: SubscribedTopics): boolean {
  if (a.size !== b.size) return false;
  for (const [name, info] of a) {
    const other = b.get(name);
    if (other === undefined || other.id !== info.id || other.partitions !== info.partitions) return false;
  }
  return true;
}
