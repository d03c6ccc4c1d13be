// AlterClientQuotas as the controller applies it (KIP-546's rules): one result per entry, all of
// an entry's ops or none, typed refusals, validate_only writing nothing; the image keeps an
// entity while it has a value, and a snapshot carries the quotas.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { applyRecords } from '../../../../src/cluster/metadata/delta.js';
import { MetadataImage } from '../../../../src/cluster/metadata/image.js';
import { quotaChanges } from '../../../../src/cluster/metadata/quota_changes.js';
import { encodeSnapshot, loadSnapshot } from '../../../../src/cluster/metadata/snapshot.js';
import { quotaEntityKey } from '../../../../src/coordinator/client_quotas.js';
import type { AlterClientQuotasEntry } from '../../../../src/protocol/apis/client_quotas.js';
import { ErrorCode } from '../../../../src/protocol/errors.js';

const AT = { endOffset: 1, epoch: 1 };

function alter(image: MetadataImage, entries: AlterClientQuotasEntry[], validateOnly = false): { image: MetadataImage; codes: number[] } {
  const { records, results } = quotaChanges(image, { entries, validateOnly });
  return { image: applyRecords(image, records, AT), codes: results.map((r) => r.errorCode) };
}

const set = (key: string, value: number): AlterClientQuotasEntry['ops'][number] => ({ key, value, remove: false });
const remove = (key: string): AlterClientQuotasEntry['ops'][number] => ({ key, value: 0, remove: true });

describe('quotaChanges', () => {
  it('sets, replaces and removes values, dropping an entity with none left', () => {
    const user = [{ entityType: 'user', entityName: 'alice' }];
    const defaults = [{ entityType: 'user', entityName: null }, { entityType: 'client-id', entityName: null }];
    let { image, codes } = alter(MetadataImage.EMPTY, [
      { entity: user, ops: [set('producer_byte_rate', 1000), set('request_percentage', 12.5)] },
      { entity: defaults, ops: [set('consumer_byte_rate', 2000)] },
    ]);
    assert.deepEqual(codes, [ErrorCode.NONE, ErrorCode.NONE]);
    assert.deepEqual(image.quotas.get(quotaEntityKey({ user: 'alice' })), { producer_byte_rate: 1000, request_percentage: 12.5 });
    assert.deepEqual(image.quotas.get(quotaEntityKey({ user: null, clientId: null })), { consumer_byte_rate: 2000 });
    ({ image } = alter(image, [{ entity: user, ops: [set('producer_byte_rate', 3000), remove('request_percentage')] }]));
    assert.deepEqual(image.quotas.get(quotaEntityKey({ user: 'alice' })), { producer_byte_rate: 3000 });
    ({ image, codes } = alter(image, [{ entity: user, ops: [remove('producer_byte_rate'), remove('consumer_byte_rate')] }]));
    assert.deepEqual(codes, [ErrorCode.NONE], 'removing a value that is not set is no error');
    assert.equal(image.quotas.get(quotaEntityKey({ user: 'alice' })), undefined);
    assert.equal(image.quotas.size, 1);
  });

  it('refuses a bad entry with INVALID_REQUEST and applies the good ones beside it', () => {
    const good = { entity: [{ entityType: 'client-id', entityName: 'ok' }], ops: [set('producer_byte_rate', 10)] };
    const goodIp = { entity: [{ entityType: 'ip', entityName: '::1' }], ops: [set('connection_creation_rate', 10)] };
    const bad: AlterClientQuotasEntry[] = [
      { entity: [{ entityType: 'ip', entityName: '1.2.3.4' }], ops: [set('producer_byte_rate', 10)] },
      { entity: [{ entityType: 'user', entityName: 'a' }, { entityType: 'user', entityName: 'b' }], ops: [set('producer_byte_rate', 10)] },
      { entity: [], ops: [set('producer_byte_rate', 10)] },
      { entity: [{ entityType: 'user', entityName: '' }], ops: [set('producer_byte_rate', 10)] },
      { entity: [{ entityType: 'user', entityName: 'a' }], ops: [set('connection_creation_rate', 10)] },
      { entity: [{ entityType: 'user', entityName: 'a' }], ops: [set('producer_byte_rate', 0)] },
      { entity: [{ entityType: 'user', entityName: 'a' }], ops: [set('producer_byte_rate', 1.5)] },
      { entity: [{ entityType: 'user', entityName: 'a' }], ops: [set('producer_byte_rate', 10), set('producer_byte_rate', 20)] },
      // One bad op refuses the entry's good ones too.
      { entity: [{ entityType: 'user', entityName: 'a' }], ops: [set('consumer_byte_rate', 10), set('request_percentage', -1)] },
      // An ip entity: alone, an IP address, connection_creation_rate only, a whole number.
      { entity: [{ entityType: 'ip', entityName: '1.2.3.4' }, { entityType: 'user', entityName: 'a' }], ops: [set('connection_creation_rate', 10)] },
      { entity: [{ entityType: 'ip', entityName: 'broker.example' }], ops: [set('connection_creation_rate', 10)] },
      { entity: [{ entityType: 'ip', entityName: '1.2.3.4' }], ops: [set('connection_creation_rate', 1.5)] },
    ];
    const { image, codes } = alter(MetadataImage.EMPTY, [...bad, good, goodIp]);
    assert.deepEqual(codes, [...bad.map(() => ErrorCode.INVALID_REQUEST), ErrorCode.NONE, ErrorCode.NONE]);
    assert.deepEqual([...image.quotas.keys()], [quotaEntityKey({ clientId: 'ok' }), quotaEntityKey({ ip: '::1' })]);
  });

  it('answers validate_only as it would apply, and writes nothing', () => {
    const { records, results } = quotaChanges(MetadataImage.EMPTY, {
      entries: [{ entity: [{ entityType: 'user', entityName: 'a' }], ops: [set('producer_byte_rate', 10)] }], validateOnly: true,
    });
    assert.deepEqual(records, []);
    assert.deepEqual(results.map((r) => r.errorCode), [ErrorCode.NONE]);
  });

  it('carries the quotas through a snapshot', () => {
    const { image } = alter(MetadataImage.EMPTY, [
      { entity: [{ entityType: 'user', entityName: null }], ops: [set('producer_byte_rate', 5), set('request_percentage', 50)] },
      { entity: [{ entityType: 'user', entityName: 'u' }, { entityType: 'client-id', entityName: 'c' }], ops: [set('consumer_byte_rate', 7)] },
      { entity: [{ entityType: 'ip', entityName: null }], ops: [set('connection_creation_rate', 3)] },
    ]);
    assert.equal(image.quotas.size, 3);
    const loaded = loadSnapshot(encodeSnapshot(image), AT);
    assert.deepEqual(new Map(loaded.quotas), new Map(image.quotas));
  });
});
