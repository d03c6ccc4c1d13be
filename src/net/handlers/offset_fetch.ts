// OffsetFetch: v1-7 ask about one group, v8+ about several at once (each its own coordinator
// call). v1 has no group-level error field, so a group error is reported on every partition.
// v9 (KIP-848) names the member and its epoch, which the coordinator checks.
import type { OffsetFetchReply } from '../../coordinator/groups/group_api.js';
import { handler, type Wire } from '../handler.js';
import {
  OffsetFetchApi,
  type OffsetFetchRequest,
  type OffsetFetchRequestGroup,
  type OffsetFetchResponse,
} from '../../protocol/apis/offset_fetch.js';
import { ErrorCode } from '../../protocol/errors.js';
import { groupDenied, type GroupDeps } from './group_common.js';
import { AclOperation } from '../../coordinator/acl/acl.js';
import { permitsTopic } from '../acl_authority.js';
import type { HandlerContext } from '../handler.js';

type TopicOut = Wire<OffsetFetchResponse['topics'][number]>;

/**
 * The group's offsets for the topics the principal may describe: as Kafka answers, a group it may
 * not describe is GROUP_AUTHORIZATION_FAILED, a topic it named and may not describe
 * TOPIC_AUTHORIZATION_FAILED, and such topics are left out of an all-topics answer.
 */
async function fetchGroup(ctx: HandlerContext, deps: GroupDeps, g: OffsetFetchRequestGroup, requireStable: boolean): Promise<OffsetFetchReply> {
  if (g.groupId === '') return { kind: 'offsetFetch', errorCode: ErrorCode.INVALID_GROUP_ID, topics: [] };
  if (groupDenied(ctx, AclOperation.DESCRIBE, g.groupId)) return { kind: 'offsetFetch', errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED, topics: [] };
  const r = await groupOffsets(deps, g, requireStable);
  if (ctx.authorizer == null || ctx.authorizer.open) return r;
  const topics = r.topics.flatMap((t) => {
    if (permitsTopic(ctx.authorizer, AclOperation.DESCRIBE, t.name)) return [t];
    if (g.topics === null) return [];
    return [{ name: t.name, partitions: t.partitions.map((p) => ({ partition: p.partition, offset: -1, leaderEpoch: -1, metadata: null, errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED })) }];
  });
  return { ...r, topics };
}

function groupOffsets(deps: GroupDeps, g: OffsetFetchRequestGroup, requireStable: boolean): Promise<OffsetFetchReply> {
  return deps.groups.call(g.groupId, {
    kind: 'offsetFetch',
    groupId: g.groupId,
    topics: g.topics?.map((t) => ({ name: t.name, partitions: t.partitionIndexes })) ?? null,
    requireStable,
    memberId: g.memberId,
    memberEpoch: g.memberEpoch,
  });
}

function topicsOut(r: OffsetFetchReply, asked: OffsetFetchRequestGroup['topics'], errorOnPartitions: boolean): TopicOut[] {
  if (r.errorCode !== ErrorCode.NONE && errorOnPartitions) {
    return (asked ?? []).map((t) => ({
      name: t.name,
      partitions: t.partitionIndexes.map((p) => ({ partitionIndex: p, committedOffset: -1, committedLeaderEpoch: -1, metadata: '', errorCode: r.errorCode })),
    }));
  }
  return r.topics.map((t) => ({
    name: t.name,
    partitions: t.partitions.map((p) => ({
      partitionIndex: p.partition, committedOffset: p.offset, committedLeaderEpoch: p.leaderEpoch, metadata: p.metadata ?? '', errorCode: p.errorCode,
    })),
  }));
}

export const offsetFetchHandler = handler({
  api: OffsetFetchApi,
  async handle(ctx, req: OffsetFetchRequest, deps: GroupDeps): Promise<Wire<OffsetFetchResponse>> {
    if (ctx.version >= 8) {
      const groups = await Promise.all(req.groups.map(async (g) => {
        const r = await fetchGroup(ctx, deps, g, req.requireStable);
        return { groupId: g.groupId, errorCode: r.errorCode, topics: topicsOut(r, g.topics, false) };
      }));
      return { throttleTimeMs: 0, groups };
    }
    const single: OffsetFetchRequestGroup = { groupId: req.groupId, memberId: null, memberEpoch: -1, topics: req.topics };
    const r = await fetchGroup(ctx, deps, single, req.requireStable);
    return { throttleTimeMs: 0, errorCode: r.errorCode, topics: topicsOut(r, req.topics, ctx.version < 2) };
  },
});
