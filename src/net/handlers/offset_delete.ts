// OffsetDelete: drops a group's committed offsets for some partitions, refusing those of topics
// the group's live members still subscribe to (GROUP_SUBSCRIBED_TO_TOPIC).
import { handler, type Wire } from '../handler.js';
import { groupDenied, type GroupDeps } from './group_common.js';
import { AclOperation } from '../../coordinator/acl/acl.js';
import { permitsTopic } from '../acl_authority.js';
import { OffsetDeleteApi, type OffsetDeleteRequest, type OffsetDeleteResponse } from '../../protocol/apis/offset_delete.js';
import { ErrorCode } from '../../protocol/errors.js';

export const offsetDeleteHandler = handler({
  api: OffsetDeleteApi,
  async handle(ctx, req: OffsetDeleteRequest, deps: GroupDeps): Promise<Wire<OffsetDeleteResponse>> {
    if (req.groupId === '') return { errorCode: ErrorCode.INVALID_GROUP_ID, throttleTimeMs: 0, topics: [] };
    if (groupDenied(ctx, AclOperation.DELETE, req.groupId)) return { errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED, throttleTimeMs: 0, topics: [] };
    const readable = req.topics.filter((t) => permitsTopic(ctx.authorizer, AclOperation.READ, t.name));
    const denied = req.topics.filter((t) => !readable.includes(t)).map((t) => ({
      name: t.name, partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED })),
    }));
    const r = await deps.groups.call(req.groupId, {
      kind: 'offsetDelete',
      groupId: req.groupId,
      topics: readable.map((t) => ({ name: t.name, partitions: t.partitions.map((p) => p.partitionIndex) })),
    });
    return {
      errorCode: r.errorCode,
      throttleTimeMs: 0,
      topics: [...denied, ...r.topics.map((t) => ({ name: t.name, partitions: t.partitions.map((p) => ({ partitionIndex: p.partition, errorCode: p.errorCode })) }))],
    };
  },
});
