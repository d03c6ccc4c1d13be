// A connection's SASL state: before authentication only ApiVersions and the SASL APIs pass; a
// handshake picks a mechanism (v0: raw tokens follow); a failure ends the session; KIP-368
// re-authentication extends a session that would expire, only as the same user, never over v0,
// and a session past its lifetime refuses every other request.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SaslFailure } from '../../../src/common/sasl_mechanisms.js';
import { ErrorCode } from '../../../src/protocol/errors.js';
import { SaslSession, type SaslSettings } from '../../../src/net/sasl_session.js';

const METADATA = 3;
const API_VERSIONS = 18;
const HANDSHAKE = 17;
const AUTHENTICATE = 36;

function session(clock: { now: number }, maxReauthMs = 1000): SaslSession {
  const users = new Map([['alice', 'pw-a'], ['bob', 'pw-b']]);
  const settings: SaslSettings = {
    mechanisms: ['PLAIN'],
    scramCredential: () => undefined,
    plainPassword: (user, password) => users.get(user) === password.toString(),
    maxReauthMs,
    now: () => clock.now,
  };
  return new SaslSession(settings);
}

const plain = (user: string, password: string): Buffer => Buffer.from(`\0${user}\0${password}`);

describe('SaslSession', () => {
  it('serves only ApiVersions and SASL before authentication, everything after', () => {
    const s = session({ now: 0 });
    assert.equal(s.refusal(API_VERSIONS), null);
    assert.equal(s.refusal(HANDSHAKE), null);
    assert.match(s.refusal(METADATA) ?? '', /before authentication/);
    assert.equal(s.handshake('PLAIN', 1), ErrorCode.NONE);
    assert.equal(s.expectsRawToken, false);
    const answer = s.authenticate(plain('alice', 'pw-a'));
    assert.deepEqual([answer.authenticated, answer.lifetimeMs, s.principal], [true, 1000, 'User:alice']);
    assert.equal(s.refusal(METADATA), null);
  });

  it('a v0 handshake means raw tokens; an unknown mechanism or a bad token fails the session for good', () => {
    const raw = session({ now: 0 });
    assert.equal(raw.handshake('PLAIN', 0), ErrorCode.NONE);
    assert.equal(raw.expectsRawToken, true);
    const unknown = session({ now: 0 });
    assert.equal(unknown.handshake('GSSAPI', 1), ErrorCode.UNSUPPORTED_SASL_MECHANISM);
    assert.ok(unknown.failed);
    assert.match(unknown.refusal(API_VERSIONS) ?? '', /failed/);
    const wrong = session({ now: 0 });
    wrong.handshake('PLAIN', 1);
    assert.throws(() => wrong.authenticate(plain('alice', 'nope')), SaslFailure);
    assert.ok(wrong.failed);
    const early = session({ now: 0 });
    assert.throws(() => early.authenticate(plain('alice', 'pw-a')), (e: unknown) => e instanceof SaslFailure && e.code === ErrorCode.ILLEGAL_SASL_STATE);
  });

  it('expires after its lifetime unless re-authenticated as the same user (v1+)', () => {
    const clock = { now: 0 };
    const s = session(clock);
    s.handshake('PLAIN', 1);
    s.authenticate(plain('alice', 'pw-a'));
    clock.now = 999;
    assert.equal(s.refusal(METADATA), null);
    clock.now = 1000;
    assert.match(s.refusal(METADATA) ?? '', /expired/);
    assert.equal(s.refusal(HANDSHAKE), null, 're-authentication stays possible');
    assert.equal(s.handshake('PLAIN', 1), ErrorCode.NONE);
    assert.equal(s.refusal(AUTHENTICATE), null);
    s.authenticate(plain('alice', 'pw-a'));
    assert.equal(s.refusal(METADATA), null, 'a new lifetime from the re-authentication');
    clock.now = 2500;
    assert.equal(s.handshake('PLAIN', 1), ErrorCode.NONE);
    assert.throws(() => s.authenticate(plain('bob', 'pw-b')), /same user/);
    assert.ok(s.failed);
    const v0 = session(clock);
    v0.handshake('PLAIN', 1);
    v0.authenticate(plain('alice', 'pw-a'));
    assert.equal(v0.handshake('PLAIN', 0), ErrorCode.ILLEGAL_SASL_STATE);
  });

  it('without a lifetime a session never expires', () => {
    const clock = { now: 0 };
    const s = session(clock, 0);
    s.handshake('PLAIN', 1);
    assert.equal(s.authenticate(plain('bob', 'pw-b')).lifetimeMs, 0);
    clock.now = 1e12;
    assert.equal(s.refusal(METADATA), null);
  });
});
