// OffsetDelete: drops a group's committed offsets for some partitions, refusing those of topics
// the group's live members still subscribe to (GROUP_SUBSCRIBED_TO_TOPIC).
import { handler, type Wire } from '../handler.js';
import type { GroupDeps } from './group_common.js';
import { OffsetDeleteApi, type OffsetDeleteRequest, type OffsetDeleteResponse } from '../../protocol/apis/offset_delete.js';
import { ErrorCode } from '../../protocol/errors.js';

export const offsetDeleteHandler = handler({
  api: OffsetDeleteApi,
  async handle(_ctx, req: OffsetDeleteRequest, deps: GroupDeps): Promise<Wire<OffsetDeleteResponse>> {
    if (req.groupId === '') return { errorCode: ErrorCode.INVALID_GROUP_ID, throttleTimeMs: 0, topics: [] };
    const r = await deps.groups.call(req.groupId, {
      kind: 'offsetDelete',
      groupId: req.groupId,
      topics: req.topics.map((t) => ({ name: t.name, partitions: t.partitions.map((p) => p.partitionIndex) })),
    });
    return {
      errorCode: r.errorCode,
      throttleTimeMs: 0,
      topics: r.topics.map((t) => ({ name: t.name, partitions: t.partitions.map((p) => ({ partitionIndex: p.partition, errorCode: p.errorCode })) })),
    };
  },
});
