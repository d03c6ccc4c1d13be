// OffsetCommit: partitions of unknown topics are refused here (UNKNOWN_TOPIC_OR_PARTITION, as
// Kafka does); the rest go to the group's coordinator, which checks membership and generation
// (v9: member epoch) and answers once the offsets are durable. v0 commits from outside any
// generation; v1 may date each partition's commit; v2-4 may carry a retention time.
import type { ClusterView } from '../../cluster/cluster_view.js';
import type { CommitCall } from '../../coordinator/groups/group_api.js';
import { groupDenied, type GroupDeps } from './group_common.js';
import { AclOperation } from '../../coordinator/acl/acl.js';
import { permitsTopic } from '../acl_authority.js';
import { handler, type Wire } from '../handler.js';
import { OffsetCommitApi, type OffsetCommitRequest, type OffsetCommitResponse } from '../../protocol/apis/offset_commit.js';
import { ErrorCode } from '../../protocol/errors.js';

type TopicOut = Wire<OffsetCommitResponse['topics'][number]>;

export interface OffsetCommitDeps extends GroupDeps {
  readonly cluster: ClusterView;
}

export const offsetCommitHandler = handler({
  api: OffsetCommitApi,
  async handle(ctx, req: OffsetCommitRequest, deps: OffsetCommitDeps): Promise<Wire<OffsetCommitResponse>> {
    const all = (code: number): TopicOut[] =>
      req.topics.map((t) => ({ name: t.name, partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode: code })) }));
    if (req.groupId === '') return { throttleTimeMs: 0, topics: all(ErrorCode.INVALID_GROUP_ID) };
    if (groupDenied(ctx, AclOperation.READ, req.groupId)) return { throttleTimeMs: 0, topics: all(ErrorCode.GROUP_AUTHORIZATION_FAILED) };
    const known: CommitCall['topics'] = [];
    const unreadable = new Set(req.topics.filter((t) => !permitsTopic(ctx.authorizer, AclOperation.READ, t.name)).map((t) => t.name));
    for (const t of req.topics) {
      if (unreadable.has(t.name)) continue;
      const topic = deps.cluster.topic(t.name);
      const partitions = t.partitions
        .filter((p) => topic !== undefined && p.partitionIndex >= 0 && p.partitionIndex < topic.partitions)
        .map((p) => ({
          partition: p.partitionIndex, offset: p.committedOffset, leaderEpoch: p.committedLeaderEpoch, metadata: p.committedMetadata,
          commitTimestamp: p.commitTimestamp,
        }));
      if (partitions.length > 0) known.push({ name: t.name, partitions });
    }
    const codes = new Map<string, number>();
    if (known.length > 0) {
      const r = await deps.groups.call(req.groupId, {
        kind: 'commit',
        groupId: req.groupId,
        generationId: req.generationIdOrMemberEpoch,
        memberId: req.memberId,
        groupInstanceId: req.groupInstanceId,
        retentionTimeMs: ctx.version <= 4 ? req.retentionTimeMs : -1,
        topics: known,
      });
      for (const t of r.topics) for (const p of t.partitions) codes.set(`${p.partition}:${t.name}`, p.errorCode);
    }
    const topics = req.topics.map((t) => ({
      name: t.name,
      partitions: t.partitions.map((p) => ({
        partitionIndex: p.partitionIndex,
        errorCode: unreadable.has(t.name) ? ErrorCode.TOPIC_AUTHORIZATION_FAILED : (codes.get(`${p.partitionIndex}:${t.name}`) ?? ErrorCode.UNKNOWN_TOPIC_OR_PARTITION),
      })),
    }));
    return { throttleTimeMs: 0, topics };
  },
});
