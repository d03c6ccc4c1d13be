// Who a secured controller listener serves: super users (the inter-broker user among them) and
// principals granted CLUSTER_ACTION on the cluster; anyone else has the connection closed, the
// refusal told once to the listener's log and not again by the connection. ApiVersions and SASL's
// APIs are served before that. What is served runs without an authorizer (forwarded requests were
// authorised on the broker the client sent them to).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { MetadataQuorum } from '../../../src/actors/quorum/metadata_quorum.js';
import type { MetadataImage, StoredAcl } from '../../../src/cluster/metadata/image.js';
import { AclOperation, AclPermission, CLUSTER_RESOURCE, PatternType, ResourceType } from '../../../src/coordinator/acl/acl.js';
import type { RaftStatus } from '../../../src/coordinator/raft/raft_node.js';
import { AclAuthority } from '../../../src/net/acl_authority.js';
import { buildControllerHandlers } from '../../../src/net/controller_server.js';
import { CloseConnection, type HandlerContext, type HandlerResult, type Wire } from '../../../src/net/handler.js';
import { ApiVersionsApi, type ApiVersionsResponse } from '../../../src/protocol/apis/api_versions.js';
import { DescribeQuorumApi, type DescribeQuorumResponse } from '../../../src/protocol/apis/describe_quorum.js';
import { METADATA_TOPIC_NAME } from '../../../src/protocol/apis/quorum_common.js';
import { ErrorCode } from '../../../src/protocol/errors.js';
import { answered, requestContext } from '../../helpers/handler_context.js';

const STATUS = { role: 'follower', epoch: 3, leaderId: 1, replicas: [], voters: [1, 2, 3] } as unknown as RaftStatus;
// Only DescribeQuorum is called here, and it reads only the driver's status.
const quorum = { driver: { status: () => STATUS, tickToMs: () => -1 } } as unknown as MetadataQuorum;

const grant: StoredAcl = {
  id: 'grant', resourceType: ResourceType.CLUSTER, resourceName: CLUSTER_RESOURCE, patternType: PatternType.LITERAL,
  principal: 'User:CN=broker-4', host: '*', operation: AclOperation.CLUSTER_ACTION, permission: AclPermission.ALLOW,
};
// AclAuthority reads nothing of the image but its ACLs.
const image = { acls: new Map([[grant.id, grant]]) } as unknown as MetadataImage;
const authority = new AclAuthority({ superUsers: new Set(['User:broker']), allowEveryoneIfNoAclFound: false }, () => image);

function setup(): { refusals: string[]; call: (principal: string, apiKey: number, req: unknown) => HandlerResult<unknown> } {
  const refusals: string[] = [];
  const handlers = buildControllerHandlers({ quorum, clusterId: 'c', endpoints: [], refused: (principal, _host, api) => refusals.push(`${principal} ${api}`) });
  const call = (principal: string, apiKey: number, req: unknown): HandlerResult<unknown> => {
    const ctx: HandlerContext = { ...requestContext(apiKey, 0), authorizer: authority.forConnection(() => principal, '127.0.0.1') };
    const result = handlers.get(apiKey)!.handle(ctx, req);
    assert.ok(!(result instanceof Promise), 'answered at once');
    return result;
  };
  return { refusals, call };
}

const describeQuorum = { topics: [{ topicName: METADATA_TOPIC_NAME, partitions: [{ partitionIndex: 0 }] }] };

describe('a secured controller listener', () => {
  it('serves a super user, and runs the API without an authorizer', () => {
    const { refusals, call } = setup();
    const res = answered(call('User:broker', DescribeQuorumApi.key, describeQuorum)) as Wire<DescribeQuorumResponse>;
    assert.equal(res.topics?.[0]?.partitions?.[0]?.errorCode, ErrorCode.NOT_LEADER_OR_FOLLOWER);
    assert.deepEqual(refusals, []);
  });

  it('serves a principal granted CLUSTER_ACTION, though DescribeQuorum alone would ask for DESCRIBE', () => {
    const { refusals, call } = setup();
    const res = answered(call('User:CN=broker-4', DescribeQuorumApi.key, describeQuorum)) as Wire<DescribeQuorumResponse>;
    assert.equal(res.errorCode, ErrorCode.NONE);
    assert.deepEqual(refusals, []);
  });

  it('closes the connection of anyone else, told once to the listener\'s log and not by the connection', () => {
    const { refusals, call } = setup();
    const res = call('User:mallory', DescribeQuorumApi.key, describeQuorum);
    assert.ok(res instanceof CloseConnection);
    assert.equal(res.logged, true);
    assert.match(res.detail, /User:mallory lacks CLUSTER_ACTION on the cluster for DescribeQuorum/);
    assert.deepEqual(refusals, ['User:mallory DescribeQuorum']);
  });

  it('answers ApiVersions to anyone', () => {
    const { refusals, call } = setup();
    const res = answered(call('User:ANONYMOUS', ApiVersionsApi.key, {})) as Wire<ApiVersionsResponse>;
    assert.equal(res.errorCode, ErrorCode.NONE);
    assert.deepEqual(refusals, []);
  });
});
