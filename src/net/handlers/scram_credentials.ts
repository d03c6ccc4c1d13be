// DescribeUserScramCredentials and AlterUserScramCredentials (KIP-554), main thread. Describe
// reads the local metadata image (mechanisms and iteration counts only: salts and keys never
// leave the broker). Alter runs on the active controller, through the controller channel on a
// client listener and on the quorum itself on the controller listener (which answers the request
// forwarded by a broker); a client listener answers once its own image shows every accepted
// change, so a client may authenticate with a credential as soon as it was told it exists.
import type { ControllerReply } from '../../cluster/metadata/controller.js';
import { scramKey, type MetadataImage } from '../../cluster/metadata/image.js';
import type { AlterScramRequest } from '../../cluster/metadata/scram_changes.js';
import { SCRAM_MECHANISMS } from '../../common/sasl_mechanisms.js';
import {
  AlterUserScramCredentialsApi, DescribeUserScramCredentialsApi, SCRAM_MECHANISM_CODES,
  type AlterUserScramCredentialsRequest, type AlterUserScramCredentialsResponse,
  type DescribeUserScramCredentialsRequest, type DescribeUserScramCredentialsResponse, type DescribeUserScramCredentialsResult,
} from '../../protocol/apis/scram_credentials.js';
import { ErrorCode, KafkaError } from '../../protocol/errors.js';
import { AclOperation } from '../../coordinator/acl/acl.js';
import { permitsCluster } from '../acl_authority.js';
import { handler, type Wire } from '../handler.js';
import { alterOnController, type WhenApplied } from './controller_alteration.js';

/** How long an alteration may wait for the controller and then for the local image. */
export const ALTER_SCRAM_TIMEOUT_MS = 30_000;
/** Bound on the users one Describe names. */
export const MAX_DESCRIBED_USERS = 10_000;

export interface DescribeScramDeps {
  /** The metadata image this node has applied. */
  readonly image: () => MetadataImage;
}

function describeUser(image: MetadataImage, user: string): Wire<DescribeUserScramCredentialsResult> {
  const credentialInfos = [];
  for (const m of SCRAM_MECHANISMS) {
    const c = image.scram.get(scramKey(m, user));
    if (c !== undefined) credentialInfos.push({ mechanism: SCRAM_MECHANISM_CODES[m], iterations: c.iterations });
  }
  if (credentialInfos.length === 0) return { user, errorCode: ErrorCode.RESOURCE_NOT_FOUND, errorMessage: `${user} has no SCRAM credential`, credentialInfos };
  return { user, errorCode: ErrorCode.NONE, errorMessage: null, credentialInfos };
}

export const describeUserScramCredentialsHandler = handler({
  api: DescribeUserScramCredentialsApi,
  handle(ctx, req: DescribeUserScramCredentialsRequest, deps: DescribeScramDeps): Wire<DescribeUserScramCredentialsResponse> {
    if (!permitsCluster(ctx.authorizer, AclOperation.DESCRIBE)) {
      return { throttleTimeMs: 0, errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, errorMessage: 'not authorized on the cluster', results: [] };
    }
    const image = deps.image();
    const base = { throttleTimeMs: 0, errorCode: ErrorCode.NONE, errorMessage: null };
    if (req.users === null || req.users.length === 0) {
      const users = [...new Set([...image.scram.values()].map((c) => c.user))].sort();
      return { ...base, results: users.map((u) => describeUser(image, u)) };
    }
    if (req.users.length > MAX_DESCRIBED_USERS) {
      return { ...base, errorCode: ErrorCode.POLICY_VIOLATION, errorMessage: `more than ${MAX_DESCRIBED_USERS} users in one request`, results: [] };
    }
    const counts = new Map<string, number>();
    for (const u of req.users) counts.set(u.name, (counts.get(u.name) ?? 0) + 1);
    // As Kafka answers: a user named twice is one DUPLICATE_RESOURCE result.
    return {
      ...base,
      results: [...counts].map(([user, n]) => (n > 1
        ? { user, errorCode: ErrorCode.DUPLICATE_RESOURCE, errorMessage: `${user} is named more than once`, credentialInfos: [] }
        : describeUser(image, user))),
    };
  },
});

export interface AlterScramDeps {
  /** Runs the alteration on the active controller. */
  readonly alter: (req: AlterScramRequest, timeoutMs: number) => Promise<ControllerReply>;
  /** Absent on the controller listener. */
  readonly applied?: WhenApplied;
}

/** Every user the request names, each with `code`. */
function refuseAll(req: AlterUserScramCredentialsRequest, code: ErrorCode, message: string): Wire<AlterUserScramCredentialsResponse> {
  const users = [...new Set([...req.deletions.map((d) => d.name), ...req.upsertions.map((u) => u.name)])];
  return { throttleTimeMs: 0, results: users.map((user) => ({ user, errorCode: code, errorMessage: message })) };
}

/** Whether `image` shows the request's accepted changes for the users that succeeded. */
function shows(image: MetadataImage, req: AlterUserScramCredentialsRequest, accepted: ReadonlySet<string>): boolean {
  for (const d of req.deletions) {
    const m = SCRAM_MECHANISMS[d.mechanism - 1];
    if (accepted.has(d.name) && m !== undefined && image.scram.get(scramKey(m, d.name)) !== undefined) return false;
  }
  for (const u of req.upsertions) {
    const m = SCRAM_MECHANISMS[u.mechanism - 1];
    const c = m === undefined ? undefined : image.scram.get(scramKey(m, u.name));
    if (accepted.has(u.name) && (c === undefined || !c.salt.equals(u.salt) || c.iterations !== u.iterations)) return false;
  }
  return true;
}

export const alterUserScramCredentialsHandler = handler({
  api: AlterUserScramCredentialsApi,
  barrier: true,
  async handle(ctx, req: AlterUserScramCredentialsRequest, deps: AlterScramDeps): Promise<Wire<AlterUserScramCredentialsResponse>> {
    if (!permitsCluster(ctx.authorizer, AclOperation.ALTER)) return refuseAll(req, ErrorCode.CLUSTER_AUTHORIZATION_FAILED, 'not authorized on the cluster');
    const reply = await alterOnController(
      'alterScramCredentials',
      (timeoutMs) => deps.alter({ deletions: req.deletions, upsertions: req.upsertions }, timeoutMs),
      deps.applied,
      (r) => {
        const accepted = new Set(r.results.filter((x) => x.errorCode === ErrorCode.NONE).map((x) => x.user));
        return accepted.size === 0 ? null : (image) => shows(image, req, accepted);
      },
      ALTER_SCRAM_TIMEOUT_MS,
    );
    if (reply instanceof KafkaError) return refuseAll(req, reply.code, reply.message);
    return { throttleTimeMs: 0, results: reply.results.map((r) => ({ user: r.user, errorCode: r.errorCode, errorMessage: r.message })) };
  },
});
