// CreateAcls and DeleteAcls as the controller applies them: one result per creation (invalid
// bindings refused alone, an existing one not written twice), one per filter with the ACLs it
// removed (an ACL two filters match removed once); the records round-trip through the log's
// encoding and a snapshot, so ACLs survive a restart.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { aclCreations, aclDeletions } from '../../../../src/cluster/metadata/acl_changes.js';
import { applyRecords } from '../../../../src/cluster/metadata/delta.js';
import { MetadataImage } from '../../../../src/cluster/metadata/image.js';
import { decodeBatch, encodeBatch } from '../../../../src/cluster/metadata/records.js';
import { encodeSnapshot, loadSnapshot } from '../../../../src/cluster/metadata/snapshot.js';
import { AclOperation, AclPermission, PatternType, ResourceType, type AclBinding } from '../../../../src/coordinator/acl/acl.js';
import { ErrorCode } from '../../../../src/protocol/errors.js';

const AT = { endOffset: 1, epoch: 1 };
const READ_ORDERS: AclBinding = {
  resourceType: ResourceType.TOPIC, resourceName: 'orders', patternType: PatternType.LITERAL, principal: 'User:alice',
  host: '*', operation: AclOperation.READ, permission: AclPermission.ALLOW,
};

function ids(): () => string {
  let n = 0;
  return () => (++n).toString(16).padStart(32, '0');
}

describe('aclCreations', () => {
  it('writes one record per new binding and answers each creation', () => {
    const bad = { ...READ_ORDERS, principal: 'alice' };
    const { records, results } = aclCreations(MetadataImage.EMPTY, [READ_ORDERS, bad, READ_ORDERS], ids());
    assert.deepEqual(results.map((r) => r.errorCode), [ErrorCode.NONE, ErrorCode.INVALID_REQUEST, ErrorCode.NONE]);
    assert.equal(records.length, 1, 'a binding named twice is written once');
    const image = applyRecords(MetadataImage.EMPTY, records, AT);
    assert.deepEqual([...image.acls.values()], [{ id: '1'.padStart(32, '0'), ...READ_ORDERS }]);
    assert.equal(aclCreations(image, [READ_ORDERS], ids()).records.length, 0, 'an existing binding is not written again');
  });
});

describe('aclDeletions', () => {
  it('removes what each filter matches, once', () => {
    const write = { ...READ_ORDERS, operation: AclOperation.WRITE };
    const image = applyRecords(MetadataImage.EMPTY, aclCreations(MetadataImage.EMPTY, [READ_ORDERS, write], ids()).records, AT);
    const everything = { resourceType: ResourceType.ANY, resourceName: null, patternType: PatternType.ANY, principal: null, host: null, operation: AclOperation.ANY, permission: AclPermission.ANY };
    const reads = { ...everything, operation: AclOperation.READ };
    const { records, results } = aclDeletions(image, [reads, everything, { ...everything, permission: AclPermission.UNKNOWN }]);
    assert.deepEqual(results.map((r) => [r.errorCode, r.removed.length]), [[ErrorCode.NONE, 1], [ErrorCode.NONE, 2], [ErrorCode.INVALID_REQUEST, 0]]);
    assert.equal(records.length, 2);
    assert.equal(applyRecords(image, records, AT).acls.size, 0);
  });
});

describe('ACL records', () => {
  it('round-trip through a batch and a snapshot', () => {
    const { records } = aclCreations(MetadataImage.EMPTY, [READ_ORDERS, { ...READ_ORDERS, resourceName: 'pay', patternType: PatternType.PREFIXED, permission: AclPermission.DENY }], ids());
    assert.deepEqual(decodeBatch(encodeBatch(records)), records);
    const image = applyRecords(MetadataImage.EMPTY, records, AT);
    const loaded = loadSnapshot(encodeSnapshot(image), AT);
    assert.deepEqual([...loaded.acls.values()], [...image.acls.values()]);
  });
});
