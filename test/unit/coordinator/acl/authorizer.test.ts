// The authoriser core against Kafka's rules: DENY beats ALLOW, implied operations, literal,
// wildcard and prefixed patterns, User:* and host *, super users, allow.everyone.if.no.acl.found,
// the any-resource check InitProducerId uses, filters (ANY, MATCH) and binding validation; with
// fast-check properties over random ACL sets.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  AclOperation, AclPermission, checkFilter, filterMatches, PatternType, ResourceType, validBinding,
  type AclBinding, type AclFilter,
} from '../../../../src/coordinator/acl/acl.js';
import { AclIndex, DecisionCache, MAX_CACHED_DECISIONS, type AuthorizerSettings } from '../../../../src/coordinator/acl/authorizer.js';
import { KafkaError } from '../../../../src/protocol/errors.js';

const CLOSED: AuthorizerSettings = { superUsers: new Set(['User:admin']), allowEveryoneIfNoAclFound: false };
const OPEN: AuthorizerSettings = { superUsers: new Set(), allowEveryoneIfNoAclFound: true };
const alice = { principal: 'User:alice', host: '10.0.0.1' };
const bob = { principal: 'User:bob', host: '10.0.0.2' };

function acl(over: Partial<AclBinding>): AclBinding {
  return {
    resourceType: ResourceType.TOPIC, resourceName: 'orders', patternType: PatternType.LITERAL, principal: 'User:alice',
    host: '*', operation: AclOperation.READ, permission: AclPermission.ALLOW, ...over,
  };
}

describe('AclIndex.authorize', () => {
  it('allows what an ALLOW grants and nothing else when no ACL is found', () => {
    const index = new AclIndex([acl({})]);
    assert.equal(index.authorize(CLOSED, alice, AclOperation.READ, ResourceType.TOPIC, 'orders'), true);
    assert.equal(index.authorize(CLOSED, bob, AclOperation.READ, ResourceType.TOPIC, 'orders'), false);
    assert.equal(index.authorize(CLOSED, alice, AclOperation.WRITE, ResourceType.TOPIC, 'orders'), false);
    assert.equal(index.authorize(CLOSED, alice, AclOperation.READ, ResourceType.TOPIC, 'other'), false);
    // Open only where no ACL names the resource.
    assert.equal(index.authorize(OPEN, alice, AclOperation.READ, ResourceType.TOPIC, 'other'), true);
    assert.equal(index.authorize(OPEN, bob, AclOperation.READ, ResourceType.TOPIC, 'orders'), false);
  });

  it('lets DENY win over ALLOW, and a DENY of ALL deny everything', () => {
    const index = new AclIndex([acl({ principal: 'User:*' }), acl({ permission: AclPermission.DENY })]);
    assert.equal(index.authorize(CLOSED, alice, AclOperation.READ, ResourceType.TOPIC, 'orders'), false);
    assert.equal(index.authorize(CLOSED, bob, AclOperation.READ, ResourceType.TOPIC, 'orders'), true);
    const all = new AclIndex([acl({ operation: AclOperation.ALL }), acl({ operation: AclOperation.ALL, permission: AclPermission.DENY, host: '10.0.0.1' })]);
    assert.equal(all.authorize(CLOSED, alice, AclOperation.WRITE, ResourceType.TOPIC, 'orders'), false);
    assert.equal(all.authorize(CLOSED, { ...alice, host: '10.0.0.9' }, AclOperation.WRITE, ResourceType.TOPIC, 'orders'), true);
  });

  it('implies DESCRIBE from READ, WRITE, DELETE and ALTER, and DESCRIBE_CONFIGS from ALTER_CONFIGS, only for ALLOW', () => {
    for (const op of [AclOperation.READ, AclOperation.WRITE, AclOperation.DELETE, AclOperation.ALTER]) {
      assert.equal(new AclIndex([acl({ operation: op })]).authorize(CLOSED, alice, AclOperation.DESCRIBE, ResourceType.TOPIC, 'orders'), true);
    }
    assert.equal(new AclIndex([acl({ operation: AclOperation.CREATE })]).authorize(CLOSED, alice, AclOperation.DESCRIBE, ResourceType.TOPIC, 'orders'), false);
    assert.equal(new AclIndex([acl({ operation: AclOperation.ALTER_CONFIGS })]).authorize(CLOSED, alice, AclOperation.DESCRIBE_CONFIGS, ResourceType.TOPIC, 'orders'), true);
    // A DENY of READ does not deny DESCRIBE.
    const index = new AclIndex([acl({ operation: AclOperation.WRITE }), acl({ permission: AclPermission.DENY })]);
    assert.equal(index.authorize(CLOSED, alice, AclOperation.DESCRIBE, ResourceType.TOPIC, 'orders'), true);
  });

  it('matches the literal wildcard and prefixed patterns, not other resource types', () => {
    const index = new AclIndex([
      acl({ resourceName: '*', operation: AclOperation.DESCRIBE }),
      acl({ resourceName: 'pay', patternType: PatternType.PREFIXED, operation: AclOperation.WRITE }),
    ]);
    assert.equal(index.authorize(CLOSED, alice, AclOperation.DESCRIBE, ResourceType.TOPIC, 'anything'), true);
    assert.equal(index.authorize(CLOSED, alice, AclOperation.WRITE, ResourceType.TOPIC, 'payments'), true);
    assert.equal(index.authorize(CLOSED, alice, AclOperation.WRITE, ResourceType.TOPIC, 'pa'), false);
    assert.equal(index.authorize(CLOSED, alice, AclOperation.WRITE, ResourceType.GROUP, 'payments'), false);
  });

  it('allows super users everything', () => {
    const index = new AclIndex([acl({ principal: 'User:*', operation: AclOperation.ALL, permission: AclPermission.DENY })]);
    assert.equal(index.authorize(CLOSED, { principal: 'User:admin', host: 'x' }, AclOperation.ALTER, ResourceType.CLUSTER, 'kafka-cluster'), true);
  });

  it('finds WRITE on some topic unless a DENY covers the allowed pattern', () => {
    const prefixed = acl({ resourceName: 'pay', patternType: PatternType.PREFIXED, operation: AclOperation.WRITE });
    assert.equal(new AclIndex([prefixed]).authorizeAny(CLOSED, alice, AclOperation.WRITE, ResourceType.TOPIC), true);
    assert.equal(new AclIndex([prefixed]).authorizeAny(CLOSED, bob, AclOperation.WRITE, ResourceType.TOPIC), false);
    const denyWide = acl({ resourceName: 'p', patternType: PatternType.PREFIXED, operation: AclOperation.WRITE, permission: AclPermission.DENY });
    assert.equal(new AclIndex([prefixed, denyWide]).authorizeAny(CLOSED, alice, AclOperation.WRITE, ResourceType.TOPIC), false);
    const denyAll = acl({ resourceName: '*', operation: AclOperation.ALL, permission: AclPermission.DENY });
    assert.equal(new AclIndex([prefixed, denyAll]).authorizeAny(CLOSED, alice, AclOperation.WRITE, ResourceType.TOPIC), false);
    assert.equal(AclIndex.EMPTY.authorizeAny(OPEN, alice, AclOperation.WRITE, ResourceType.TOPIC), true);
  });
});

describe('ACL properties', () => {
  const names = fc.constantFrom('orders', 'ord', 'payments', 'pay', '*', 'o');
  const arbAcl = fc.record({
    resourceType: fc.constantFrom(ResourceType.TOPIC, ResourceType.GROUP),
    resourceName: names,
    patternType: fc.constantFrom(PatternType.LITERAL, PatternType.PREFIXED),
    principal: fc.constantFrom('User:alice', 'User:bob', 'User:*'),
    host: fc.constantFrom('*', '10.0.0.1', '10.0.0.2'),
    operation: fc.constantFrom(AclOperation.ALL, AclOperation.READ, AclOperation.WRITE, AclOperation.DESCRIBE, AclOperation.ALTER_CONFIGS, AclOperation.DESCRIBE_CONFIGS),
    permission: fc.constantFrom(AclPermission.ALLOW, AclPermission.DENY),
  }).filter((b) => !(b.patternType === PatternType.PREFIXED && b.resourceName === '*')) as fc.Arbitrary<AclBinding>;
  const arbQuery = fc.record({
    who: fc.constantFrom(alice, bob, { principal: 'User:carol', host: '10.0.0.3' }),
    op: fc.constantFrom(AclOperation.READ, AclOperation.WRITE, AclOperation.DESCRIBE, AclOperation.DESCRIBE_CONFIGS),
    type: fc.constantFrom(ResourceType.TOPIC, ResourceType.GROUP),
    name: fc.constantFrom('orders', 'payments', 'other'),
    open: fc.boolean(),
  });

  it('a matching DENY always wins', () => {
    fc.assert(fc.property(fc.array(arbAcl, { maxLength: 12 }), arbQuery, (acls, q) => {
      const deny = acl({ resourceType: q.type, resourceName: q.name, principal: q.who.principal, operation: q.op, permission: AclPermission.DENY });
      const settings = { superUsers: new Set<string>(), allowEveryoneIfNoAclFound: q.open };
      return !new AclIndex([...acls, deny]).authorize(settings, q.who, q.op, q.type, q.name);
    }));
  });

  it('adding an ALLOW never removes access', () => {
    fc.assert(fc.property(fc.array(arbAcl, { maxLength: 12 }), arbAcl, arbQuery, (acls, extra, q) => {
      const settings = { superUsers: new Set<string>(), allowEveryoneIfNoAclFound: false };
      const allow = { ...extra, permission: AclPermission.ALLOW } as AclBinding;
      const before = new AclIndex(acls).authorize(settings, q.who, q.op, q.type, q.name);
      return !before || new AclIndex([...acls, allow]).authorize(settings, q.who, q.op, q.type, q.name);
    }));
  });

  it('super users are always allowed', () => {
    fc.assert(fc.property(fc.array(arbAcl, { maxLength: 12 }), arbQuery, (acls, q) => {
      const settings = { superUsers: new Set([q.who.principal]), allowEveryoneIfNoAclFound: false };
      return new AclIndex(acls).authorize(settings, q.who, q.op, q.type, q.name);
    }));
  });

  it('agrees with a direct reading of the rules', () => {
    fc.assert(fc.property(fc.array(arbAcl, { maxLength: 12 }), arbQuery, (acls, q) => {
      const settings = { superUsers: new Set<string>(), allowEveryoneIfNoAclFound: q.open };
      const applies = acls.filter((b) => b.resourceType === q.type && filterMatches({
        resourceType: q.type, resourceName: q.name, patternType: PatternType.MATCH, principal: null, host: null, operation: AclOperation.ANY, permission: AclPermission.ANY,
      }, b));
      const mine = applies.filter((b) => (b.principal === q.who.principal || b.principal === 'User:*') && (b.host === '*' || b.host === q.who.host));
      const denied = mine.some((b) => b.permission === AclPermission.DENY && (b.operation === q.op || b.operation === AclOperation.ALL));
      const implied: Record<number, readonly number[]> = {
        [AclOperation.DESCRIBE]: [AclOperation.READ, AclOperation.WRITE, AclOperation.DELETE, AclOperation.ALTER],
        [AclOperation.DESCRIBE_CONFIGS]: [AclOperation.ALTER_CONFIGS],
      };
      const allowed = mine.some((b) => b.permission === AclPermission.ALLOW
        && (b.operation === q.op || b.operation === AclOperation.ALL || (implied[q.op] ?? []).includes(b.operation)));
      const expected = !denied && (allowed || (applies.length === 0 && q.open));
      return new AclIndex(acls).authorize(settings, q.who, q.op, q.type, q.name) === expected;
    }));
  });
});

describe('filters and validation', () => {
  const any: AclFilter = { resourceType: ResourceType.ANY, resourceName: null, patternType: PatternType.ANY, principal: null, host: null, operation: AclOperation.ANY, permission: AclPermission.ANY };

  it('ANY matches everything; MATCH selects the patterns that apply to a name; LITERAL only its own', () => {
    const lit = acl({});
    const wild = acl({ resourceName: '*' });
    const pre = acl({ resourceName: 'ord', patternType: PatternType.PREFIXED });
    for (const b of [lit, wild, pre]) assert.equal(filterMatches(any, b), true);
    const match = { ...any, resourceName: 'orders', patternType: PatternType.MATCH };
    assert.deepEqual([lit, wild, pre].map((b) => filterMatches(match, b)), [true, true, true]);
    assert.equal(filterMatches({ ...match, resourceName: 'x' }, pre), false);
    const literal = { ...any, resourceName: 'orders', patternType: PatternType.LITERAL };
    assert.deepEqual([lit, wild, pre].map((b) => filterMatches(literal, b)), [true, false, false]);
    assert.equal(filterMatches({ ...any, principal: 'User:bob' }, lit), false);
    assert.throws(() => checkFilter({ ...any, operation: AclOperation.UNKNOWN }), KafkaError);
  });

  it('refuses bindings Kafka refuses, with INVALID_REQUEST', () => {
    const ok = { ...acl({}) };
    assert.deepEqual(validBinding(ok), ok);
    for (const bad of [
      { ...ok, resourceType: ResourceType.ANY }, { ...ok, patternType: PatternType.MATCH }, { ...ok, operation: AclOperation.ANY },
      { ...ok, permission: AclPermission.ANY }, { ...ok, principal: 'alice' }, { ...ok, resourceName: '' },
      { ...ok, resourceType: ResourceType.CLUSTER, resourceName: 'other' }, { ...ok, patternType: PatternType.PREFIXED, resourceName: '*' },
    ]) {
      assert.throws(() => validBinding(bad), (err: unknown) => err instanceof KafkaError && err.code === 42);
    }
  });
});

describe('DecisionCache', () => {
  it('answers from the cache until the index changes, and stays bounded', () => {
    const cache = new DecisionCache();
    let computed = 0;
    const a = new AclIndex([]);
    const compute = (): boolean => ++computed > 0;
    cache.decide(a, AclOperation.READ, ResourceType.TOPIC, 't', compute);
    cache.decide(a, AclOperation.READ, ResourceType.TOPIC, 't', compute);
    assert.equal(computed, 1);
    cache.decide(new AclIndex([]), AclOperation.READ, ResourceType.TOPIC, 't', compute);
    assert.equal(computed, 2);
    for (let i = 0; i < MAX_CACHED_DECISIONS * 2; i++) cache.decide(a, AclOperation.READ, ResourceType.TOPIC, `t${i}`, () => true);
    assert.ok((cache as unknown as { decisions: Map<string, boolean> }).decisions.size <= MAX_CACHED_DECISIONS);
  });
});
