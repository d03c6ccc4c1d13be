// SASL mechanisms on the server side, as pure exchanges (any thread; the Kafka listener runs them
// on main): SCRAM-SHA-256 and SCRAM-SHA-512 (RFC 5802, RFC 7677) and PLAIN (RFC 4616).
// A SCRAM credential is what the broker stores instead of a password: salt, iteration count,
// StoredKey = H(HMAC(SaltedPassword, "Client Key")) and ServerKey = HMAC(SaltedPassword, "Server
// Key"), SaltedPassword = PBKDF2(password, salt, iterations). Verifying a client never needs the
// password: ClientKey = proof XOR HMAC(StoredKey, AuthMessage), and H(ClientKey) must equal
// StoredKey (compared in constant time). An unknown user gets a made-up credential derived from a
// per-process secret, so the exchange fails only at the proof, as a wrong password does, and the
// answers do not tell which users exist. Channel binding is not offered ("p=" is refused); as
// Kafka does, passwords are taken as their UTF-8 bytes (no SASLprep).
// Every failure is a SaslFailure (a KafkaError with SASL_AUTHENTICATION_FAILED, or
// ILLEGAL_SASL_STATE for a token after the end): its message names the rule broken, never a
// password or proof.
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { ErrorCode, KafkaError } from '../protocol/errors.js';
import { scramSaltedPassword } from '../protocol/apis/scram_credentials.js';

export const SCRAM_MECHANISMS = ['SCRAM-SHA-256', 'SCRAM-SHA-512'] as const;
export type ScramMechanism = (typeof SCRAM_MECHANISMS)[number];

/** Kafka's bounds on a SCRAM credential's iteration count (ScramMechanism.minIterations / 16384). */
export const SCRAM_MIN_ITERATIONS = 4096;
export const SCRAM_MAX_ITERATIONS = 16384;

const HASHES: Readonly<Record<ScramMechanism, { readonly name: 'sha256' | 'sha512'; readonly bytes: number }>> = {
  'SCRAM-SHA-256': { name: 'sha256', bytes: 32 },
  'SCRAM-SHA-512': { name: 'sha512', bytes: 64 },
};

/** Every mechanism a SASL listener may enable. */
export const SASL_MECHANISMS = ['PLAIN', ...SCRAM_MECHANISMS] as const;
export type SaslMechanism = (typeof SASL_MECHANISMS)[number];

export function isScramMechanism(name: string): name is ScramMechanism {
  return (SCRAM_MECHANISMS as readonly string[]).includes(name);
}

/** What the broker keeps of a SCRAM user's password (Kafka's UserScramCredentialRecord fields). */
export interface ScramCredential {
  readonly mechanism: ScramMechanism;
  readonly salt: Buffer;
  readonly storedKey: Buffer;
  readonly serverKey: Buffer;
  readonly iterations: number;
}

export type SaslFailureReason = 'malformed' | 'bad-proof' | 'bad-nonce' | 'unsupported' | 'state';

/** A refused SASL exchange; `reason` is for metrics and logs, the message for the client. */
export class SaslFailure extends KafkaError {
  constructor(
    readonly reason: SaslFailureReason,
    message: string,
  ) {
    super(reason === 'state' ? ErrorCode.ILLEGAL_SASL_STATE : ErrorCode.SASL_AUTHENTICATION_FAILED, message);
    this.name = 'SaslFailure';
  }
}

const hmac = (hash: string, key: Buffer, data: Buffer | string): Buffer => createHmac(hash, key).update(data).digest();

function checkIterations(iterations: number): void {
  if (!Number.isInteger(iterations) || iterations < SCRAM_MIN_ITERATIONS || iterations > SCRAM_MAX_ITERATIONS) {
    throw new KafkaError(ErrorCode.UNACCEPTABLE_CREDENTIAL, `iterations must be in [${SCRAM_MIN_ITERATIONS}, ${SCRAM_MAX_ITERATIONS}], got ${iterations}`);
  }
}

/** PBKDF2-HMAC of the password with the mechanism's hash: what AlterUserScramCredentials carries. */
export function saltedPassword(mechanism: ScramMechanism, password: string, salt: Buffer, iterations: number): Buffer {
  checkIterations(iterations);
  return scramSaltedPassword(mechanism, password, salt, iterations);
}

/** The stored credential from a salted password (throws UNACCEPTABLE_CREDENTIAL for one the mechanism cannot have made). */
export function credentialFromSaltedPassword(mechanism: ScramMechanism, salted: Buffer, salt: Buffer, iterations: number): ScramCredential {
  checkIterations(iterations);
  const { name, bytes } = HASHES[mechanism];
  if (salt.length === 0) throw new KafkaError(ErrorCode.UNACCEPTABLE_CREDENTIAL, 'the salt must not be empty');
  if (salted.length !== bytes) throw new KafkaError(ErrorCode.UNACCEPTABLE_CREDENTIAL, `a ${mechanism} salted password has ${bytes} bytes, not ${salted.length}`);
  return {
    mechanism,
    salt,
    storedKey: createHash(name).update(hmac(name, salted, 'Client Key')).digest(),
    serverKey: hmac(name, salted, 'Server Key'),
    iterations,
  };
}

/** Derives the stored credential from a password. */
export function scramCredential(mechanism: ScramMechanism, password: string, salt: Buffer, iterations: number): ScramCredential {
  if (salt.length === 0) throw new KafkaError(ErrorCode.UNACCEPTABLE_CREDENTIAL, 'the salt must not be empty');
  return credentialFromSaltedPassword(mechanism, saltedPassword(mechanism, password, salt, iterations), salt, iterations);
}

/** One step of a server-side SASL exchange. */
export interface SaslStep {
  /** What goes back to the client (possibly empty). */
  readonly token: Buffer;
  /** The client is authenticated as `principal` once this token is sent. */
  readonly done: boolean;
}

/** A server-side SASL exchange: tokens in, tokens out, throwing SaslFailure on any refusal. */
export interface SaslExchange {
  step(token: Buffer): SaslStep;
  /** The authenticated user's name once an answer was `done`, null before. */
  readonly user: string | null;
}

/** Decodes a SCRAM saslname ("=2C" is ',', "=3D" is '='; any other '=' is invalid). */
function decodeSaslName(raw: string): string {
  if (raw === '' || /=(?!2C|3D)/.test(raw)) throw new SaslFailure('malformed', 'invalid SCRAM user name');
  return raw.replace(/=2C/g, ',').replace(/=3D/g, '=');
}

/** A nonce is printable ASCII other than ','. */
const NONCE = /^[\x21-\x2b\x2d-\x7e]+$/;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

function base64Attr(value: string, what: string): Buffer {
  if (!BASE64.test(value)) throw new SaslFailure('malformed', `${what} is not base64`);
  return Buffer.from(value, 'base64');
}

/** Splits "k=v,k=v" into its attributes, each a single letter. */
function attributes(text: string): Array<[string, string]> {
  return text.split(',').map((part) => {
    if (part.length < 2 || part[1] !== '=' || !/^[A-Za-z]$/.test(part[0]!)) throw new SaslFailure('malformed', 'invalid SCRAM attribute');
    return [part[0]!, part.slice(2)];
  });
}

function utf8(token: Buffer): string {
  const text = token.toString('utf8');
  if (!Buffer.from(text, 'utf8').equals(token)) throw new SaslFailure('malformed', 'SCRAM message is not UTF-8');
  return text;
}

interface ClientFirst {
  readonly gs2Header: string;
  readonly user: string;
  readonly bare: string;
  readonly nonce: string;
}

function parseClientFirst(text: string): ClientFirst {
  // gs2-header = gs2-cbind-flag "," [authzid] ","
  const first = text.indexOf(',');
  const second = first < 0 ? -1 : text.indexOf(',', first + 1);
  if (second < 0) throw new SaslFailure('malformed', 'SCRAM client-first message has no GS2 header');
  const flag = text.slice(0, first);
  if (flag.startsWith('p=')) throw new SaslFailure('unsupported', 'SCRAM channel binding is not supported');
  if (flag !== 'n' && flag !== 'y') throw new SaslFailure('malformed', 'invalid GS2 channel-binding flag');
  const authzid = text.slice(first + 1, second);
  if (authzid !== '' && !authzid.startsWith('a=')) throw new SaslFailure('malformed', 'invalid GS2 authorization identity');
  const bare = text.slice(second + 1);
  const attrs = attributes(bare);
  if (attrs[0]?.[0] === 'm') throw new SaslFailure('unsupported', 'SCRAM mandatory extensions are not supported');
  if (attrs.length < 2 || attrs[0]![0] !== 'n' || attrs[1]![0] !== 'r') throw new SaslFailure('malformed', 'SCRAM client-first message must start with n= and r=');
  const user = decodeSaslName(attrs[0]![1]);
  if (authzid !== '' && decodeSaslName(authzid.slice(2)) !== user) {
    throw new SaslFailure('unsupported', 'the authorization identity must be the user name');
  }
  const nonce = attrs[1]![1];
  if (!NONCE.test(nonce)) throw new SaslFailure('malformed', 'invalid SCRAM client nonce');
  // Kafka's delegation tokens announce themselves as the extension tokenauth=true; there are none here.
  for (const [key, value] of attrs.slice(2)) {
    if (key === 't' || value === '') throw new SaslFailure('unsupported', 'unsupported SCRAM extension');
  }
  return { gs2Header: text.slice(0, second + 1), user, bare, nonce };
}

/** Makes the per-process secret behind made-up credentials of unknown users. */
function fakeCredentialSource(): (mechanism: ScramMechanism, user: string) => ScramCredential {
  const secret = randomBytes(32);
  return (mechanism, user) => {
    const { name } = HASHES[mechanism];
    const seed = hmac(name, secret, `${mechanism}\0${user}`);
    return {
      mechanism,
      salt: seed.subarray(0, 16),
      storedKey: hmac(name, seed, 'stored'),
      serverKey: hmac(name, seed, 'server'),
      iterations: SCRAM_MIN_ITERATIONS,
    };
  };
}

const fakeCredential = fakeCredentialSource();

/** 24 random bytes in base64: printable and never a ','. */
export const randomNonce = (): string => randomBytes(24).toString('base64');

type ScramState =
  | { readonly kind: 'first' }
  | { readonly kind: 'final'; readonly first: ClientFirst; readonly serverFirst: string; readonly nonce: string; readonly credential: ScramCredential; readonly known: boolean }
  | { readonly kind: 'done' };

/** The server side of one SCRAM exchange: client-first, then client-final. */
export class ScramServer implements SaslExchange {
  private state: ScramState = { kind: 'first' };
  user: string | null = null;

  constructor(
    readonly mechanism: ScramMechanism,
    /** The stored credential of `user` for this mechanism, undefined when there is none. */
    private readonly lookup: (user: string) => ScramCredential | undefined,
    private readonly serverNonce: () => string = randomNonce,
  ) {}

  step(token: Buffer): SaslStep {
    const state = this.state;
    switch (state.kind) {
      case 'first':
        return this.clientFirst(utf8(token));
      case 'final':
        return this.clientFinal(utf8(token), state);
      case 'done':
        throw new SaslFailure('state', 'the SCRAM exchange is already complete');
    }
  }

  private clientFirst(text: string): SaslStep {
    const first = parseClientFirst(text);
    const stored = this.lookup(first.user);
    const credential = stored ?? fakeCredential(this.mechanism, first.user);
    const nonce = first.nonce + this.serverNonce();
    const serverFirst = `r=${nonce},s=${credential.salt.toString('base64')},i=${credential.iterations}`;
    this.state = { kind: 'final', first, serverFirst, nonce, credential, known: stored !== undefined };
    return { token: Buffer.from(serverFirst, 'utf8'), done: false };
  }

  private clientFinal(text: string, s: Extract<ScramState, { kind: 'final' }>): SaslStep {
    // Whatever happens next, this exchange is over: a failed one is never retried on the same state.
    this.state = { kind: 'done' };
    const proofAt = text.lastIndexOf(',p=');
    if (proofAt < 0) throw new SaslFailure('malformed', 'SCRAM client-final message has no proof');
    const withoutProof = text.slice(0, proofAt);
    const attrs = attributes(withoutProof);
    if (attrs.length < 2 || attrs[0]![0] !== 'c' || attrs[1]![0] !== 'r') throw new SaslFailure('malformed', 'SCRAM client-final message must start with c= and r=');
    const binding = base64Attr(attrs[0]![1], 'channel binding');
    if (!binding.equals(Buffer.from(s.first.gs2Header, 'utf8'))) throw new SaslFailure('malformed', 'SCRAM channel binding does not match the GS2 header');
    // As Kafka's server does, the nonce must end with the one sent: librdkafka repeats its client
    // nonce in front of it. What the client sent is what the AuthMessage (and so the proof) covers.
    if (!attrs[1]![1].endsWith(s.nonce)) throw new SaslFailure('bad-nonce', 'SCRAM nonce does not match');
    const { name, bytes } = HASHES[this.mechanism];
    const proof = base64Attr(text.slice(proofAt + 3), 'proof');
    if (proof.length !== bytes) throw new SaslFailure('malformed', 'SCRAM proof has the wrong length');
    const authMessage = `${s.first.bare},${s.serverFirst},${withoutProof}`;
    const signature = hmac(name, s.credential.storedKey, authMessage);
    const clientKey = Buffer.alloc(bytes);
    for (let i = 0; i < bytes; i++) clientKey[i] = proof[i]! ^ signature[i]!;
    const matches = timingSafeEqual(createHash(name).update(clientKey).digest(), s.credential.storedKey);
    if (!matches || !s.known) throw new SaslFailure('bad-proof', 'invalid credentials');
    this.user = s.first.user;
    const verifier = hmac(name, s.credential.serverKey, authMessage).toString('base64');
    return { token: Buffer.from(`v=${verifier}`, 'utf8'), done: true };
  }
}

/**
 * The server side of PLAIN (RFC 4616: [authzid] NUL authcid NUL passwd). `verify` checks a
 * password in constant time; an authzid other than the user is refused, as Kafka does.
 */
export class PlainServer implements SaslExchange {
  user: string | null = null;
  private used = false;

  constructor(private readonly verify: (user: string, password: Buffer) => boolean) {}

  step(token: Buffer): SaslStep {
    if (this.used) throw new SaslFailure('state', 'the PLAIN exchange is already complete');
    this.used = true;
    const firstNul = token.indexOf(0);
    const secondNul = firstNul < 0 ? -1 : token.indexOf(0, firstNul + 1);
    if (secondNul < 0 || token.indexOf(0, secondNul + 1) >= 0) throw new SaslFailure('malformed', 'PLAIN message must be authzid NUL user NUL password');
    const authzid = token.subarray(0, firstNul).toString('utf8');
    const user = token.subarray(firstNul + 1, secondNul).toString('utf8');
    if (user === '') throw new SaslFailure('malformed', 'PLAIN user name is empty');
    if (authzid !== '' && authzid !== user) throw new SaslFailure('unsupported', 'the authorization identity must be the user name');
    if (!this.verify(user, token.subarray(secondNul + 1))) throw new SaslFailure('bad-proof', 'invalid credentials');
    this.user = user;
    return { token: Buffer.alloc(0), done: true };
  }
}

/** Whether two secrets are equal, in time independent of where they differ and of their lengths. */
export function secretsEqual(a: Buffer, b: Buffer): boolean {
  // Both are hashed to one length first: timingSafeEqual needs equal lengths, and comparing lengths would leak them.
  const ha = createHash('sha256').update(a).digest();
  const hb = createHash('sha256').update(b).digest();
  return timingSafeEqual(ha, hb) && a.length === b.length;
}
