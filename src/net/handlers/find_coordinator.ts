// FindCoordinator: on a single node this broker coordinates every group and transactional id,
// so each key (v0-3 one, v4+ batched) is answered with this node's address; the group's
// coordinator actor is then reached by the group directory. Empty keys are refused as Kafka does.
import { handler, type Wire } from '../handler.js';
import { FindCoordinatorApi, type FindCoordinatorRequest, type FindCoordinatorResponse } from '../../protocol/apis/find_coordinator.js';
import { ErrorCode } from '../../protocol/errors.js';

const KEY_TYPE_GROUP = 0;
const KEY_TYPE_TRANSACTION = 1;

export const findCoordinatorHandler = handler({
  api: FindCoordinatorApi,
  handle(ctx, req: FindCoordinatorRequest): Wire<FindCoordinatorResponse> {
    const b = ctx.broker;
    const answer = (key: string) => {
      const valid = key.length > 0 && (req.keyType === KEY_TYPE_GROUP || req.keyType === KEY_TYPE_TRANSACTION);
      return {
        key,
        nodeId: valid ? b.nodeId : -1,
        host: valid ? b.advertisedHost : '',
        port: valid ? b.advertisedPort : -1,
        errorCode: valid ? ErrorCode.NONE : ErrorCode.INVALID_REQUEST,
        errorMessage: valid ? null : `invalid coordinator key '${key}' of type ${req.keyType}`,
      };
    };
    if (ctx.version >= 4) {
      return { throttleTimeMs: 0, errorCode: 0, errorMessage: null, nodeId: -1, host: '', port: -1, coordinators: req.coordinatorKeys.map(answer) };
    }
    const one = answer(req.key);
    return { throttleTimeMs: 0, errorCode: one.errorCode, errorMessage: one.errorMessage, nodeId: one.nodeId, host: one.host, port: one.port, coordinators: [] };
  },
});
