// The authorisation decision with Kafka's semantics, pure (any thread): super users may do
// anything; otherwise the ACLs that apply to a resource (its literal name, the literal wildcard,
// every prefixed pattern it starts with) and to the principal (or User:*) and host (or *) decide,
// a DENY for the operation (or ALL) beating any ALLOW; an ALLOW of READ, WRITE, DELETE or ALTER
// also allows DESCRIBE and one of ALTER_CONFIGS allows DESCRIBE_CONFIGS; a resource no ACL applies
// to is open only when allow.everyone.if.no.acl.found is set. An AclIndex is built once per ACL set
// and shared by every connection; a DecisionCache holds one connection's answers for one index.
import {
  AclOperation, AclPermission, PatternType, WILDCARD, WILDCARD_PRINCIPAL,
  type AclBinding, type ResourceType,
} from './acl.js';

export interface AuthorizerSettings {
  /** super.users: principals allowed everything. */
  readonly superUsers: ReadonlySet<string>;
  /** allow.everyone.if.no.acl.found. */
  readonly allowEveryoneIfNoAclFound: boolean;
}

/** Who asks, from where. */
export interface Requester {
  readonly principal: string;
  readonly host: string;
}

/** Whether an ALLOW of `granted` allows `wanted` (Kafka's implied operations). */
export function allowImplies(granted: AclOperation, wanted: AclOperation): boolean {
  if (granted === wanted || granted === AclOperation.ALL) return true;
  if (wanted === AclOperation.DESCRIBE) {
    return granted === AclOperation.READ || granted === AclOperation.WRITE || granted === AclOperation.DELETE || granted === AclOperation.ALTER;
  }
  return wanted === AclOperation.DESCRIBE_CONFIGS && granted === AclOperation.ALTER_CONFIGS;
}

function concerns(b: AclBinding, who: Requester): boolean {
  return (b.principal === who.principal || b.principal === WILDCARD_PRINCIPAL) && (b.host === who.host || b.host === WILDCARD);
}

const NONE: readonly AclBinding[] = [];

/** The bindings of one resource type, by pattern. */
interface TypeIndex {
  readonly literal: Map<string, AclBinding[]>;
  readonly prefixed: Map<string, AclBinding[]>;
  /** Lengths of the prefixes present, so a lookup tries only those. */
  readonly prefixLengths: Set<number>;
}

export class AclIndex {
  static readonly EMPTY = new AclIndex([]);
  private readonly byType = new Map<ResourceType, TypeIndex>();
  readonly size: number;

  constructor(bindings: Iterable<AclBinding>) {
    let size = 0;
    for (const b of bindings) {
      size++;
      let t = this.byType.get(b.resourceType);
      if (t === undefined) this.byType.set(b.resourceType, t = { literal: new Map(), prefixed: new Map(), prefixLengths: new Set() });
      const map = b.patternType === PatternType.LITERAL ? t.literal : t.prefixed;
      if (b.patternType === PatternType.PREFIXED) t.prefixLengths.add(b.resourceName.length);
      const list = map.get(b.resourceName);
      if (list === undefined) map.set(b.resourceName, [b]);
      else list.push(b);
    }
    this.size = size;
  }

  /** Every binding whose pattern applies to resource `name` of `type`. */
  applicable(type: ResourceType, name: string): AclBinding[] {
    const t = this.byType.get(type);
    if (t === undefined) return [];
    const out = [...(t.literal.get(name) ?? NONE)];
    if (name !== WILDCARD) out.push(...(t.literal.get(WILDCARD) ?? NONE));
    for (const len of t.prefixLengths) {
      if (len <= name.length) out.push(...(t.prefixed.get(name.slice(0, len)) ?? NONE));
    }
    return out;
  }

  /** Whether `who` may perform `op` on resource `name` of `type`. */
  authorize(settings: AuthorizerSettings, who: Requester, op: AclOperation, type: ResourceType, name: string): boolean {
    if (settings.superUsers.has(who.principal)) return true;
    const bindings = this.applicable(type, name);
    let allowed = false;
    for (const b of bindings) {
      if (!concerns(b, who)) continue;
      if (b.permission === AclPermission.DENY) {
        if (b.operation === op || b.operation === AclOperation.ALL) return false;
      } else if (allowImplies(b.operation, op)) {
        allowed = true;
      }
    }
    return allowed || (bindings.length === 0 && settings.allowEveryoneIfNoAclFound);
  }

  /**
   * Whether `who` may perform `op` on at least one resource of `type` (Kafka's authorizeByResourceType,
   * which InitProducerId uses for "WRITE on any topic"): some ALLOW grants it and no DENY covers that
   * pattern whole (a literal wildcard DENY, or a DENY on a pattern the allowed one falls under).
   */
  authorizeAny(settings: AuthorizerSettings, who: Requester, op: AclOperation, type: ResourceType): boolean {
    if (settings.superUsers.has(who.principal)) return true;
    const t = this.byType.get(type);
    if (t === undefined) return settings.allowEveryoneIfNoAclFound;
    const mine = [...t.literal.values(), ...t.prefixed.values()].flat().filter((b) => concerns(b, who));
    const denies = mine.filter((b) => b.permission === AclPermission.DENY && (b.operation === op || b.operation === AclOperation.ALL));
    if (denies.some((d) => d.patternType === PatternType.LITERAL && d.resourceName === WILDCARD)) return false;
    return mine.some((a) => a.permission === AclPermission.ALLOW && allowImplies(a.operation, op) && !denies.some((d) => (
      d.patternType === PatternType.LITERAL
        ? a.patternType === PatternType.LITERAL && d.resourceName === a.resourceName
        : a.resourceName.startsWith(d.resourceName)
    )));
  }
}

/** Bound on one connection's cached decisions; past it the cache starts over. */
export const MAX_CACHED_DECISIONS = 1024;

/** One connection's decisions for one AclIndex: a new index (the ACL set changed) empties it. */
export class DecisionCache {
  private index: AclIndex | null = null;
  private readonly decisions = new Map<string, boolean>();

  decide(index: AclIndex, op: AclOperation, type: ResourceType, name: string, compute: () => boolean): boolean {
    if (index !== this.index) {
      this.index = index;
      this.decisions.clear();
    }
    const key = `${op}:${type}:${name}`;
    const known = this.decisions.get(key);
    if (known !== undefined) return known;
    const verdict = compute();
    if (this.decisions.size >= MAX_CACHED_DECISIONS) this.decisions.clear();
    this.decisions.set(key, verdict);
    return verdict;
  }
}
