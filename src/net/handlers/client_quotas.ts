// DescribeClientQuotas and AlterClientQuotas (KIP-546), main thread. Describe reads the local
// metadata image and filters its quota entities by the request's components (exact name, the
// <default>, or any; `strict`: no part beyond them). Alter runs on the active controller, through
// the controller channel on a client listener and on the quorum itself on the controller
// listener; a client listener answers once its own image shows every accepted entry, so the
// quota a client was told about is the one this broker applies. Describe needs DESCRIBE_CONFIGS on
// the cluster, Alter ALTER_CONFIGS (CLUSTER_AUTHORIZATION_FAILED otherwise), as in Kafka.
import type { ControllerReply } from '../../cluster/metadata/controller.js';
import type { MetadataImage } from '../../cluster/metadata/image.js';
import { entityOfParts } from '../../cluster/metadata/quota_changes.js';
import {
  CLIENT_ID_ENTITY, IP_ENTITY, QUOTA_KEYS, quotaEntityKey, quotaEntityOf, quotaEntityParts, USER_ENTITY, type QuotaEntity,
} from '../../coordinator/client_quotas.js';
import {
  AlterClientQuotasApi, DescribeClientQuotasApi, QuotaMatch,
  type AlterClientQuotasRequest, type AlterClientQuotasResponse, type DescribeClientQuotasEntry,
  type DescribeClientQuotasRequest, type DescribeClientQuotasResponse,
} from '../../protocol/apis/client_quotas.js';
import { ErrorCode, KafkaError } from '../../protocol/errors.js';
import { AclOperation } from '../../coordinator/acl/acl.js';
import { permitsCluster } from '../acl_authority.js';
import { handler, type Wire } from '../handler.js';
import { alterOnController, type WhenApplied } from './controller_alteration.js';

/** How long an alteration may wait for the controller and then for the local image. */
export const ALTER_QUOTAS_TIMEOUT_MS = 30_000;

type Component = DescribeClientQuotasRequest['components'][number];

/** The entity's part of `type`: undefined when it has none, null for <default>. */
function partOf(e: QuotaEntity, type: string): string | null | undefined {
  return type === USER_ENTITY ? e.user : type === CLIENT_ID_ENTITY ? e.clientId : e.ip;
}

function matches(e: QuotaEntity, components: readonly Component[], strict: boolean): boolean {
  for (const c of components) {
    const part = partOf(e, c.entityType);
    if (part === undefined) return false;
    if (c.matchType === QuotaMatch.EXACT && part !== c.match) return false;
    if (c.matchType === QuotaMatch.DEFAULT && part !== null) return false;
  }
  return !strict || quotaEntityParts(e).length === components.length;
}

/** INVALID_REQUEST for a filter Kafka refuses: unknown types or match types, a type twice, an exact match of null. */
function checkComponents(components: readonly Component[]): void {
  const types = new Set<string>();
  for (const c of components) {
    if (c.entityType !== USER_ENTITY && c.entityType !== CLIENT_ID_ENTITY && c.entityType !== IP_ENTITY) throw new KafkaError(ErrorCode.INVALID_REQUEST, `entity type ${c.entityType} is unknown or unsupported`);
    if (types.has(c.entityType)) throw new KafkaError(ErrorCode.INVALID_REQUEST, `entity type ${c.entityType} is filtered twice`);
    types.add(c.entityType);
    if (c.matchType !== QuotaMatch.EXACT && c.matchType !== QuotaMatch.DEFAULT && c.matchType !== QuotaMatch.ANY) throw new KafkaError(ErrorCode.INVALID_REQUEST, `match type ${c.matchType}`);
    if (c.matchType === QuotaMatch.EXACT && c.match === null) throw new KafkaError(ErrorCode.INVALID_REQUEST, `an exact match of ${c.entityType} needs a name`);
  }
}

export interface DescribeQuotasDeps {
  /** The metadata image this node has applied. */
  readonly image: () => MetadataImage;
}

export const describeClientQuotasHandler = handler({
  api: DescribeClientQuotasApi,
  handle(ctx, req: DescribeClientQuotasRequest, deps: DescribeQuotasDeps): Wire<DescribeClientQuotasResponse> {
    if (!permitsCluster(ctx.authorizer, AclOperation.DESCRIBE_CONFIGS)) {
      return { throttleTimeMs: 0, errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, errorMessage: 'not authorized on the cluster', entries: null };
    }
    try {
      checkComponents(req.components);
    } catch (err) {
      if (!(err instanceof KafkaError)) throw err;
      return { throttleTimeMs: 0, errorCode: err.code, errorMessage: err.message, entries: null };
    }
    const entries: DescribeClientQuotasEntry[] = [];
    for (const [key, values] of deps.image().quotas) {
      const entity = quotaEntityOf(key);
      if (!matches(entity, req.components, req.strict)) continue;
      const pairs = QUOTA_KEYS.flatMap((k) => (values[k] === undefined ? [] : [{ key: k, value: values[k] }]));
      entries.push({ entity: quotaEntityParts(entity), values: pairs });
    }
    return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, errorMessage: null, entries };
  },
});

export interface AlterQuotasDeps {
  /** Runs the alteration on the active controller. */
  readonly alter: (req: AlterClientQuotasRequest, timeoutMs: number) => Promise<ControllerReply>;
  /** Absent on the controller listener. */
  readonly applied?: WhenApplied;
}

function refuseAll(req: AlterClientQuotasRequest, code: ErrorCode, message: string): Wire<AlterClientQuotasResponse> {
  return { throttleTimeMs: 0, entries: req.entries.map((e) => ({ errorCode: code, errorMessage: message, entity: e.entity })) };
}

/** Whether `image` holds what the accepted entries set and removed. */
function shows(image: MetadataImage, req: AlterClientQuotasRequest, accepted: ReadonlySet<number>): boolean {
  for (const i of accepted) {
    const entry = req.entries[i]!;
    const values = image.quotas.get(quotaEntityKey(entityOfParts(entry.entity)));
    for (const op of entry.ops) {
      const now = values?.[op.key as keyof typeof values];
      if (op.remove ? now !== undefined : now !== op.value) return false;
    }
  }
  return true;
}

export const alterClientQuotasHandler = handler({
  api: AlterClientQuotasApi,
  barrier: true,
  async handle(ctx, req: AlterClientQuotasRequest, deps: AlterQuotasDeps): Promise<Wire<AlterClientQuotasResponse>> {
    if (!permitsCluster(ctx.authorizer, AclOperation.ALTER_CONFIGS)) return refuseAll(req, ErrorCode.CLUSTER_AUTHORIZATION_FAILED, 'not authorized on the cluster');
    const reply = await alterOnController(
      'alterClientQuotas',
      (timeoutMs) => deps.alter(req, timeoutMs),
      deps.applied,
      (r) => {
        const accepted = new Set<number>();
        r.results.forEach((x, i) => {
          if (x.errorCode === ErrorCode.NONE) accepted.add(i);
        });
        return req.validateOnly || accepted.size === 0 ? null : (image) => shows(image, req, accepted);
      },
      ALTER_QUOTAS_TIMEOUT_MS,
    );
    if (reply instanceof KafkaError) return refuseAll(req, reply.code, reply.message);
    return { throttleTimeMs: 0, entries: [...reply.results] };
  },
});
