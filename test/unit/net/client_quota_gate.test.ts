// What each request is charged under client quotas: Produce its bytes against producer_byte_rate,
// a consumer's Fetch against consumer_byte_rate, everything its serving time against
// request_percentage; another broker's replica fetch (when its principal has CLUSTER_ACTION),
// ApiVersions and SASL are exempt. The
// throttle answered is the longer of the byte and time ones, and counted by quota.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ClientQuotas, quotaEntityKey, type QuotaValues } from '../../../src/coordinator/client_quotas.js';
import type { MetadataImage } from '../../../src/cluster/metadata/image.js';
import { AclAuthority } from '../../../src/net/acl_authority.js';
import { QuotaGate } from '../../../src/net/client_quota_gate.js';
import { ApiVersionsApi } from '../../../src/protocol/apis/api_versions.js';
import { FetchApi } from '../../../src/protocol/apis/fetch.js';
import { MetadataApi } from '../../../src/protocol/apis/metadata.js';
import { ProduceApi } from '../../../src/protocol/apis/produce.js';
import { SaslAuthenticateApi } from '../../../src/protocol/apis/sasl.js';

function gate(values: QuotaValues): { gate: QuotaGate; throttled: Array<[string, number]> } {
  const throttled: Array<[string, number]> = [];
  const configs = new Map([[quotaEntityKey({ clientId: null }), values]]);
  return { gate: new QuotaGate(new ClientQuotas(() => configs), { quotaThrottled: (q, ms) => throttled.push([q, ms]) }, () => 0), throttled };
}

/** A connection of `principal` under enforced ACLs (none set, nothing open) with super user User:broker. */
function authorizerOf(principal: string): ReturnType<AclAuthority['forConnection']> {
  const image = { acls: new Map() } as unknown as MetadataImage;
  return new AclAuthority({ superUsers: new Set(['User:broker']), allowEveryoneIfNoAclFound: false }, () => image).forConnection(() => principal, '127.0.0.1');
}

describe('QuotaGate', () => {
  it('charges Produce, consumer Fetch and other requests; exempts replica fetches, ApiVersions and SASL', () => {
    const { gate: g } = gate({ producer_byte_rate: 1 });
    assert.equal(g.chargeOf(ProduceApi.key, 9, {}, null), 'produce');
    assert.equal(g.chargeOf(FetchApi.key, 12, { replicaId: -1 }, null), 'fetch');
    assert.equal(g.chargeOf(FetchApi.key, 12, { replicaId: 2 }, null), null);
    assert.equal(g.chargeOf(FetchApi.key, 15, { replicaId: -1, replicaState: { replicaId: 2, replicaEpoch: 1 } }, null), null);
    assert.equal(g.chargeOf(FetchApi.key, 15, { replicaId: -1, replicaState: { replicaId: -1, replicaEpoch: -1 } }, null), 'fetch');
    assert.equal(g.chargeOf(MetadataApi.key, 12, {}, null), 'request');
    assert.equal(g.chargeOf(ApiVersionsApi.key, 3, {}, null), null);
    assert.equal(g.chargeOf(SaslAuthenticateApi.key, 2, {}, null), null);
  });

  it('exempts a replica fetch under ACLs only when its principal has CLUSTER_ACTION', () => {
    const { gate: g } = gate({ consumer_byte_rate: 1 });
    const follower = { replicaId: -1, replicaState: { replicaId: 2, replicaEpoch: 1 } };
    assert.equal(g.chargeOf(FetchApi.key, 15, follower, authorizerOf('User:broker')), null);
    assert.equal(g.chargeOf(FetchApi.key, 15, follower, authorizerOf('User:mallory')), 'fetch');
  });

  it('counts bytes against the byte rate of the request kind only, and time against request_percentage', () => {
    const { gate: g, throttled } = gate({ producer_byte_rate: 1000, request_percentage: 10 });
    // Fetch bytes do not count against the produce quota.
    assert.equal(g.charge('fetch', 'u', 'c', 1e9, 0), 0);
    assert.ok(g.charge('produce', 'u', 'c', 20_000, 0) > 0);
    assert.deepEqual(throttled.map(([q]) => q), ['produce']);
    // 10 % of a thread over the 10 s span is 1 s of serving time.
    assert.ok(g.charge('request', 'u', 'other', 0, 2000) > 0);
    assert.deepEqual(throttled.map(([q]) => q), ['produce', 'request']);
  });
});
