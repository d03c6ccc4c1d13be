// Authorisation on the client listeners (main thread): the broker-wide AclAuthority holds
// super.users, allow.everyone.if.no.acl.found and the AclIndex of the metadata image's current
// ACLs (rebuilt only when the image's ACL map changes), and gives each connection a
// ConnectionAuthorizer that names its principal (the SASL user, else the mTLS subject, else
// User:ANONYMOUS) and caches its decisions until the ACL set changes. With no ACLs and
// allow.everyone.if.no.acl.found on, every check answers at once without touching the cache.
import type { MetadataImage } from '../cluster/metadata/image.js';
import { ANONYMOUS_PRINCIPAL, AclOperation, CLUSTER_RESOURCE, ResourceType } from '../coordinator/acl/acl.js';
import { AclIndex, DecisionCache, type AuthorizerSettings } from '../coordinator/acl/authorizer.js';

export class AclAuthority {
  private index = AclIndex.EMPTY;
  private indexed: MetadataImage['acls'] | null = null;

  constructor(
    readonly settings: AuthorizerSettings,
    private readonly image: () => MetadataImage,
  ) {}

  /** The index of the current image's ACLs; the same object until they change. */
  current(): AclIndex {
    const acls = this.image().acls;
    if (acls !== this.indexed) {
      this.indexed = acls;
      this.index = new AclIndex(acls.values());
    }
    return this.index;
  }

  forConnection(principal: () => string | null, host: string): ConnectionAuthorizer {
    return new ConnectionAuthorizer(this, principal, host);
  }
}

/** One connection's authorisation: what its handlers ask (HandlerContext.authorizer). */
export class ConnectionAuthorizer {
  private readonly cache = new DecisionCache();

  constructor(
    private readonly authority: AclAuthority,
    /** The authenticated principal, null before (or without) authentication. */
    private readonly authenticated: () => string | null,
    /** The client's address, as ACL hosts name it. */
    readonly host: string,
  ) {}

  get principal(): string {
    return this.authenticated() ?? ANONYMOUS_PRINCIPAL;
  }

  /** Every check passes (no ACLs, everyone allowed): callers may skip per-resource work, such as filtering a shared answer. */
  get open(): boolean {
    return this.authority.current().size === 0 && this.authority.settings.allowEveryoneIfNoAclFound;
  }

  /** Whether this connection may perform `op` on resource `name` of `type`. */
  allows(op: AclOperation, type: ResourceType, name: string): boolean {
    const index = this.authority.current();
    const { settings } = this.authority;
    if (index.size === 0 && settings.allowEveryoneIfNoAclFound) return true;
    return this.cache.decide(index, op, type, name, () => index.authorize(settings, this, op, type, name));
  }

  /** Whether this connection may perform `op` on at least one resource of `type`. */
  allowsAny(op: AclOperation, type: ResourceType): boolean {
    const index = this.authority.current();
    const { settings } = this.authority;
    if (index.size === 0 && settings.allowEveryoneIfNoAclFound) return true;
    return index.authorizeAny(settings, this, op, type);
  }
}

/** Whether a request may perform `op` on the resource: always without an authorizer (unit tests, the controller listener). */
export function permits(authorizer: ConnectionAuthorizer | null | undefined, op: AclOperation, type: ResourceType, name: string): boolean {
  return authorizer == null || authorizer.allows(op, type, name);
}

export function permitsTopic(authorizer: ConnectionAuthorizer | null | undefined, op: AclOperation, topic: string): boolean {
  return permits(authorizer, op, ResourceType.TOPIC, topic);
}

export function permitsGroup(authorizer: ConnectionAuthorizer | null | undefined, op: AclOperation, group: string): boolean {
  return permits(authorizer, op, ResourceType.GROUP, group);
}

export function permitsCluster(authorizer: ConnectionAuthorizer | null | undefined, op: AclOperation): boolean {
  return permits(authorizer, op, ResourceType.CLUSTER, CLUSTER_RESOURCE);
}

/** Whether a request claiming a follower's replica id may act as one: Kafka's CLUSTER_ACTION on the cluster. */
export function permitsReplication(authorizer: ConnectionAuthorizer | null | undefined): boolean {
  return permitsCluster(authorizer, AclOperation.CLUSTER_ACTION);
}
