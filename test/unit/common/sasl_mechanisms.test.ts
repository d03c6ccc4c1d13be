// The server side of SCRAM-SHA-256/512 and PLAIN: RFC 7677's SHA-256 exchange byte for byte, a
// SHA-512 round trip, and as properties: a correct client always authenticates, any flipped bit
// of its proof is refused, and malformed messages are refused with a SaslFailure, never another
// exception.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import {
  PlainServer, SaslFailure, SCRAM_MECHANISMS, ScramServer, scramCredential, secretsEqual, type ScramCredential, type ScramMechanism,
} from '../../../src/common/sasl_mechanisms.js';
import { ErrorCode } from '../../../src/protocol/errors.js';
import { ScramClient } from '../../../src/common/scram_client.js';

const text = (b: Buffer): string => b.toString('utf8');
const buf = (s: string): Buffer => Buffer.from(s, 'utf8');

/** Runs `fn` and returns the SaslFailure it threw; fails the test on success or on any other exception. */
function failure(fn: () => unknown): SaslFailure {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof SaslFailure, `expected a SaslFailure, got ${String(err)}`);
    return err;
  }
  assert.fail('expected the exchange to be refused');
}

// Credentials are costly to derive (PBKDF2 at 4096 rounds): one per mechanism and password is kept.
const credentials = new Map<string, ScramCredential>();
function credentialOf(mechanism: ScramMechanism, password: string, salt = buf('fixed-salt-for-tests')): ScramCredential {
  const key = `${mechanism}\0${password}\0${salt.toString('hex')}`;
  let c = credentials.get(key);
  if (c === undefined) credentials.set(key, (c = scramCredential(mechanism, password, salt, 4096)));
  return c;
}

describe('SCRAM (RFC 5802)', () => {
  it('answers RFC 7677\'s SCRAM-SHA-256 exchange byte for byte', () => {
    const salt = Buffer.from('W22ZaJ0SNY7soEsUEjb6gQ==', 'base64');
    const credential = scramCredential('SCRAM-SHA-256', 'pencil', salt, 4096);
    const server = new ScramServer('SCRAM-SHA-256', (u) => (u === 'user' ? credential : undefined), () => '%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0');
    const first = server.step(buf('n,,n=user,r=rOprNGfwEbeRWgbNEkqO'));
    assert.equal(text(first.token), 'r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096');
    assert.equal(first.done, false);
    const final = server.step(buf('c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ='));
    assert.equal(text(final.token), 'v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=');
    assert.equal(final.done, true);
    assert.equal(server.user, 'user');
    assert.equal(failure(() => server.step(buf('again'))).code, ErrorCode.ILLEGAL_SASL_STATE);
  });

  it('SCRAM-SHA-512: a client with the password authenticates and verifies the server', () => {
    const credential = credentialOf('SCRAM-SHA-512', 'secret-512');
    const server = new ScramServer('SCRAM-SHA-512', (u) => (u === 'alice' ? credential : undefined));
    const client = new ScramClient('SCRAM-SHA-512', 'alice', 'secret-512', 'clientnonce512');
    const serverFirst = text(server.step(buf(client.first())).token);
    const final = server.step(buf(client.final(serverFirst)));
    assert.equal(final.done, true);
    assert.ok(client.verifies(text(final.token)));
  });

  it('refuses a wrong password and an unknown user alike, at the proof', () => {
    const credential = credentialOf('SCRAM-SHA-256', 'right');
    for (const [user, password] of [['alice', 'wrong'], ['mallory', 'right']] as const) {
      const server = new ScramServer('SCRAM-SHA-256', (u) => (u === 'alice' ? credential : undefined));
      const client = new ScramClient('SCRAM-SHA-256', user, password, 'n0nce');
      const serverFirst = text(server.step(buf(client.first())).token);
      assert.match(serverFirst, /^r=n0nce[^,]+,s=[^,]+,i=4096$/, 'an unknown user still gets a salt and an iteration count');
      const f = failure(() => server.step(buf(client.final(serverFirst))));
      assert.equal(f.code, ErrorCode.SASL_AUTHENTICATION_FAILED);
      assert.equal(f.reason, 'bad-proof');
      assert.equal(server.user, null);
    }
  });

  it('property: a correct client always authenticates, whatever its name, password and nonce', () => {
    const mechanism = fc.constantFrom(...SCRAM_MECHANISMS);
    const nonce = fc.stringMatching(/^[\x21-\x2b\x2d-\x7e]{1,40}$/);
    fc.assert(
      fc.property(mechanism, fc.string({ minLength: 1, maxLength: 20 }), fc.constantFrom('p1', 'pässwörd', 'a,b=c'), nonce, (mech, user, password, clientNonce) => {
        const credential = credentialOf(mech, password);
        const server = new ScramServer(mech, (u) => (u === user ? credential : undefined));
        const client = new ScramClient(mech, user, password, clientNonce);
        const serverFirst = text(server.step(buf(client.first())).token);
        const final = server.step(buf(client.final(serverFirst)));
        assert.equal(final.done, true);
        assert.equal(server.user, user);
        assert.ok(client.verifies(text(final.token)));
      }),
      { numRuns: 200 },
    );
  });

  it('property: any bit flipped in the proof is refused', () => {
    fc.assert(
      fc.property(fc.constantFrom(...SCRAM_MECHANISMS), fc.nat(), (mech, bitSeed) => {
        const credential = credentialOf(mech, 'pw');
        const server = new ScramServer(mech, () => credential);
        const client = new ScramClient(mech, 'u', 'pw', 'abc');
        const serverFirst = text(server.step(buf(client.first())).token);
        const final = client.final(serverFirst);
        const at = final.lastIndexOf(',p=');
        const proof = Buffer.from(final.slice(at + 3), 'base64');
        const bit = bitSeed % (proof.length * 8);
        proof[bit >> 3]! ^= 1 << (bit & 7);
        const f = failure(() => server.step(buf(`${final.slice(0, at)},p=${proof.toString('base64')}`)));
        assert.equal(f.reason, 'bad-proof');
      }),
      { numRuns: 300 },
    );
  });

  it('property: arbitrary client-first and client-final messages are refused with a SaslFailure or answered, never thrown otherwise', () => {
    const credential = credentialOf('SCRAM-SHA-256', 'pw');
    const message = fc.oneof(
      fc.uint8Array({ maxLength: 200 }).map((a) => Buffer.from(a)),
      fc.array(fc.constantFrom('n', 'y', 'p=x', 'a=u', 'n=u', 'r=x', 'c=biws', 'p=AAAA', 'm=1', 't=1', '=', '', '=2C', 's=1', 'i=1'), { maxLength: 8 }).map((p) => buf(p.join(','))),
    );
    fc.assert(
      fc.property(message, message, (first, final) => {
        const server = new ScramServer('SCRAM-SHA-256', () => credential);
        try {
          server.step(first);
          server.step(final);
          assert.fail('a made-up exchange authenticated');
        } catch (err) {
          assert.ok(err instanceof SaslFailure, `threw ${String(err)}`);
        }
        assert.equal(server.user, null);
      }),
      { numRuns: 1000 },
    );
  });

  it('refuses channel binding, a changed nonce and a mismatched channel-binding attribute', () => {
    const credential = credentialOf('SCRAM-SHA-256', 'pw');
    const fresh = (): ScramServer => new ScramServer('SCRAM-SHA-256', () => credential);
    assert.equal(failure(() => fresh().step(buf('p=tls-unique,,n=u,r=abc'))).reason, 'unsupported');
    assert.equal(failure(() => fresh().step(buf('n,a=other,n=u,r=abc'))).reason, 'unsupported');
    const client = new ScramClient('SCRAM-SHA-256', 'u', 'pw', 'abc');
    let server = fresh();
    const serverFirst = text(server.step(buf(client.first())).token);
    const final = client.final(serverFirst);
    assert.equal(failure(() => server.step(buf(final.replace(',r=abc', ',r=abd')))).reason, 'bad-nonce');
    server = fresh();
    const first2 = text(server.step(buf(client.first())).token);
    assert.equal(failure(() => server.step(buf(client.final(first2).replace('c=biws', 'c=eSws')))).reason, 'malformed');
  });

  it('rejects credentials outside Kafka\'s iteration bounds', () => {
    assert.throws(() => scramCredential('SCRAM-SHA-256', 'pw', buf('s'), 4095), /iterations/);
    assert.throws(() => scramCredential('SCRAM-SHA-256', 'pw', buf('s'), 16385), /iterations/);
  });
});

describe('PLAIN (RFC 4616)', () => {
  const users = new Map([['alice', buf('s3cret')]]);
  const verify = (u: string, p: Buffer): boolean => {
    const want = users.get(u);
    return want !== undefined && secretsEqual(want, p);
  };

  it('authenticates with or without an authzid equal to the user', () => {
    for (const token of ['\0alice\0s3cret', 'alice\0alice\0s3cret']) {
      const server = new PlainServer(verify);
      const step = server.step(buf(token));
      assert.deepEqual([step.done, step.token.length, server.user], [true, 0, 'alice']);
    }
  });

  it('refuses a wrong password, an unknown user, another authzid and malformed tokens', () => {
    const cases: Array<[string, string]> = [
      ['\0alice\0wrong', 'bad-proof'], ['\0bob\0s3cret', 'bad-proof'], ['\0alice\0s3cret\0', 'malformed'],
      ['bob\0alice\0s3cret', 'unsupported'], ['alice', 'malformed'], ['\0\0x', 'malformed'],
    ];
    for (const [token, reason] of cases) assert.equal(failure(() => new PlainServer(verify).step(buf(token))).reason, reason, JSON.stringify(token));
  });

  it('secretsEqual compares content and length', () => {
    assert.ok(secretsEqual(buf('abc'), buf('abc')));
    assert.ok(!secretsEqual(buf('abc'), buf('abd')));
    assert.ok(!secretsEqual(buf('abc'), buf('abcd')));
  });
});
