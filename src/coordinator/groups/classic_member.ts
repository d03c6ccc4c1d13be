// One member of a classic group: identity, timeouts, supported protocols, current assignment and
// the calls it has parked (at most one JoinGroup and one SyncGroup). Runs on the shard that owns
// the group's offsets partition, inside the pure coordinator. Invariants: protocol names are
// unique within a member (first occurrence wins); joinRef/syncRef are refs not yet answered.

export interface Protocol {
  readonly name: string;
  readonly metadata: Uint8Array;
}

export const EMPTY_BYTES: Uint8Array = new Uint8Array(0);

/** Kafka's group.classic.new.member.join.timeout.ms: a new member parked in JoinGroup cannot heartbeat. */
export const NEW_MEMBER_JOIN_TIMEOUT_MS = 300_000;

export class ClassicMember {
  joinRef: number | null = null;
  syncRef: number | null = null;
  assignment: Uint8Array = EMPTY_BYTES;
  /** Joined but has not yet received a JoinGroup answer: expires on the new-member timeout, not the session. */
  isNew = false;

  constructor(
    public memberId: string,
    readonly instanceId: string | null,
    readonly clientId: string,
    readonly clientHost: string,
    public sessionTimeoutMs: number,
    public rebalanceTimeoutMs: number,
    public protocols: readonly Protocol[],
    /** Session (or new-member) expiry. */
    public deadline: number,
  ) {}

  metadataFor(protocolName: string | null): Uint8Array {
    for (const p of this.protocols) if (p.name === protocolName) return p.metadata;
    return EMPTY_BYTES;
  }

  /** Same protocols with the same metadata in the same order (Kafka's MemberMetadata.matches). */
  matches(protocols: readonly Protocol[]): boolean {
    if (protocols.length !== this.protocols.length) return false;
    for (let i = 0; i < protocols.length; i++) {
      const a = protocols[i]!;
      const b = this.protocols[i]!;
      if (a.name !== b.name || !bytesEqual(a.metadata, b.metadata)) return false;
    }
    return true;
  }

  /** The member's most preferred protocol among those every member supports. */
  vote(candidates: ReadonlySet<string>): string | null {
    for (const p of this.protocols) if (candidates.has(p.name)) return p.name;
    return null;
  }
}

export function uniqueProtocols(protocols: readonly Protocol[]): Protocol[] {
  const seen = new Set<string>();
  const out: Protocol[] = [];
  for (const p of protocols) {
    if (seen.has(p.name)) continue;
    seen.add(p.name);
    out.push({ name: p.name, metadata: p.metadata });
  }
  return out;
}

export function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
