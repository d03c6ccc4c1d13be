// One connection's SASL state on a SASL listener (main thread): which requests it may send, the
// mechanism's exchange in progress, who it authenticated as and until when.
// Kafka's sequence: SaslHandshake names a mechanism; after a v1 handshake the tokens travel in
// SaslAuthenticate requests, after a v0 one they travel raw (a length and the token, no header;
// KIP-43), which older clients such as kafka-python 2.0 use. Before authentication only
// ApiVersions and the SASL APIs are served; anything else, a bad token, an unsupported mechanism
// or a failed exchange ends the connection (the failure answered, where the framing has a way to,
// after the listener's failure delay, as Kafka's connection.failed.authentication.delay.ms).
// KIP-368 re-authentication: with a session lifetime the answer carries session_lifetime_ms; the
// client re-runs the handshake and SaslAuthenticate (v1+, same mechanism, same user) before it
// ends, and a request other than those after it ends closes the connection.
// failedAuthenticationLog is what every SASL listener (client and controller) reports refusals with.
import {
  isScramMechanism, PlainServer, SaslFailure, ScramServer,
  type SaslExchange, type SaslMechanism, type ScramCredential, type ScramMechanism,
} from '../common/sasl_mechanisms.js';
import { ApiVersionsApi } from '../protocol/apis/api_versions.js';
import { SaslAuthenticateApi, SaslHandshakeApi } from '../protocol/apis/sasl.js';
import { ErrorCode } from '../protocol/errors.js';
import type { Logger } from 'pino';
import { RepeatLimiter } from '../common/repeat_limiter.js';
import type { BrokerMetrics } from '../metrics/metrics.js';

/** Kafka's connection.failed.authentication.delay.ms is 100 ms; a little more slows guessing further. */
export const FAILED_AUTHENTICATION_DELAY_MS = 250;
/** At most one log line per client address per this interval about failed authentications. */
const AUTH_FAILURE_LOG_INTERVAL_MS = 10_000;
/** Client addresses the failure log remembers. */
const AUTH_FAILURE_LOG_ADDRESSES = 1024;
export type AuthenticationFailureMetrics = Pick<BrokerMetrics, 'protocolError'>;

/** A listener's failed-authentication report: counted, and logged once per client address per interval with the address, mechanism and reason, never a token. */
export function failedAuthenticationLog(log: Logger, metrics: AuthenticationFailureMetrics): (remote: string, mechanism: SaslMechanism | null, failure: SaslFailure) => void {
  const failures = new RepeatLimiter(AUTH_FAILURE_LOG_INTERVAL_MS, () => performance.now(), AUTH_FAILURE_LOG_ADDRESSES);
  return (remote, mechanism, failure) => {
    metrics.protocolError('sasl-authentication');
    const verdict = failures.offer(remote);
    if (verdict.log) log.warn({ remote, mechanism, reason: failure.reason, detail: failure.message, failedBefore: verdict.suppressed }, 'failed authentication');
  };
}

/** Kafka's sasl.server.max.receive.size: the largest frame an unauthenticated client may send. */
export const SASL_MAX_RECEIVE_BYTES = 524_288;

/** What every session of one listener shares. */
export interface SaslSettings {
  readonly mechanisms: readonly SaslMechanism[];
  /** The stored credential of `user` for a SCRAM mechanism. */
  readonly scramCredential: (mechanism: ScramMechanism, user: string) => ScramCredential | undefined;
  /** Whether PLAIN's password is right for `user` (constant time). */
  readonly plainPassword: (user: string, password: Buffer) => boolean;
  /** connections.max.reauth.ms; 0: sessions do not expire. */
  readonly maxReauthMs: number;
  readonly now: () => number;
}

type State =
  /** Nothing yet: a handshake is due (ApiVersions may come first). */
  | 'handshake'
  /** A v1 handshake chose a mechanism: SaslAuthenticate requests carry its tokens. */
  | 'authenticate'
  /** A v0 handshake chose a mechanism: raw tokens follow. */
  | 'raw'
  | 'authenticated'
  /** Refused: the connection closes once the refusal is sent. */
  | 'failed';

/** The answer to one token. */
export interface SaslAnswer {
  readonly token: Buffer;
  /** Set when this answer completes authentication. */
  readonly authenticated: boolean;
  /** The session's lifetime from now, 0 when it does not expire. */
  readonly lifetimeMs: number;
}

export class SaslSession {
  private state: State = 'handshake';
  private mechanism: SaslMechanism | null = null;
  private exchange: SaslExchange | null = null;
  /** The authenticated user; kept across re-authentications, which must name the same one. */
  user: string | null = null;
  private expiresAt = Infinity;

  constructor(private readonly settings: SaslSettings) {}

  /** Not yet authenticated (re-authenticating counts as authenticated). */
  get unauthenticated(): boolean {
    return this.user === null;
  }

  /** Frames are raw SASL tokens (after a v0 handshake), not requests. */
  get expectsRawToken(): boolean {
    return this.state === 'raw';
  }

  get failed(): boolean {
    return this.state === 'failed';
  }

  /** The principal Kafka would name: User:NAME once authenticated. */
  get principal(): string | null {
    return this.user === null ? null : `User:${this.user}`;
  }

  /**
   * Why a request of `apiKey` may not be served now (the connection then closes), or null.
   * Unauthenticated: only ApiVersions and the SASL APIs; authenticated: anything but a session
   * past its lifetime, which only re-authentication may follow.
   */
  refusal(apiKey: number): string | null {
    const sasl = apiKey === SaslHandshakeApi.key || apiKey === SaslAuthenticateApi.key;
    if (this.state === 'failed') return 'authentication failed';
    if (this.user === null) return sasl || apiKey === ApiVersionsApi.key ? null : `request of api ${apiKey} before authentication`;
    if (!sasl && this.settings.now() >= this.expiresAt) return 'session expired without re-authentication';
    return null;
  }

  /** SaslHandshake: the mechanism's error code (NONE, UNSUPPORTED_SASL_MECHANISM or ILLEGAL_SASL_STATE). */
  handshake(mechanism: string, version: number): ErrorCode {
    const reauth = this.state === 'authenticated';
    if (this.state !== 'handshake' && !reauth) return this.fail(ErrorCode.ILLEGAL_SASL_STATE);
    // Re-authentication exists from SaslAuthenticate v1, so never through raw tokens.
    if (reauth && version === 0) return this.fail(ErrorCode.ILLEGAL_SASL_STATE);
    const chosen = this.settings.mechanisms.find((m) => m === mechanism);
    if (chosen === undefined || (reauth && chosen !== this.mechanism)) return this.fail(ErrorCode.UNSUPPORTED_SASL_MECHANISM);
    this.mechanism = chosen;
    this.exchange = isScramMechanism(chosen)
      ? new ScramServer(chosen, (user) => this.settings.scramCredential(chosen, user))
      : new PlainServer(this.settings.plainPassword);
    this.state = version === 0 ? 'raw' : 'authenticate';
    return ErrorCode.NONE;
  }

  get enabledMechanisms(): readonly string[] {
    return this.settings.mechanisms;
  }

  get chosenMechanism(): SaslMechanism | null {
    return this.mechanism;
  }

  /**
   * One client token (from SaslAuthenticate, or raw): the answer, or a SaslFailure (the session
   * is then failed). Throws ILLEGAL_SASL_STATE when no handshake chose a mechanism.
   */
  authenticate(token: Buffer): SaslAnswer {
    const exchange = this.exchange;
    if ((this.state !== 'authenticate' && this.state !== 'raw') || exchange === null) {
      this.state = 'failed';
      throw new SaslFailure('state', 'SaslAuthenticate before a SaslHandshake');
    }
    let step;
    try {
      step = exchange.step(token);
    } catch (err) {
      this.state = 'failed';
      throw err;
    }
    if (!step.done) return { token: step.token, authenticated: false, lifetimeMs: 0 };
    if (this.user !== null && exchange.user !== this.user) {
      this.state = 'failed';
      throw new SaslFailure('unsupported', 're-authentication must be as the same user');
    }
    this.user = exchange.user;
    this.exchange = null;
    this.state = 'authenticated';
    const lifetimeMs = this.settings.maxReauthMs;
    this.expiresAt = lifetimeMs > 0 ? this.settings.now() + lifetimeMs : Infinity;
    return { token: step.token, authenticated: true, lifetimeMs };
  }

  private fail(code: ErrorCode): ErrorCode {
    this.state = 'failed';
    return code;
  }
}

/**
 * A SASL listener's sessions and how they fail: a refused token is answered only after
 * `failureDelayMs` (so guessing passwords is slow) and reported once through `onFailure`, which
 * names the client's address and the rule broken, never a token.
 */
export class SaslAuthenticator {
  constructor(
    private readonly settings: SaslSettings,
    private readonly failureDelayMs: number,
    private readonly onFailure: (remote: string, mechanism: SaslMechanism | null, failure: SaslFailure) => void,
  ) {}

  session(): SaslSession {
    return new SaslSession(this.settings);
  }

  /** The answer to a client token, or its refusal once the failure delay has passed. */
  answer(session: SaslSession, token: Buffer, remote: string): SaslAnswer | Promise<SaslFailure> {
    try {
      return session.authenticate(token);
    } catch (err) {
      if (!(err instanceof SaslFailure)) throw err;
      this.onFailure(remote, session.chosenMechanism, err);
      return new Promise((resolve) => setTimeout(() => resolve(err), this.failureDelayMs));
    }
  }

  /** A refused handshake (unsupported mechanism, wrong state), reported like a refused token. */
  refusedHandshake(session: SaslSession, mechanism: string, code: ErrorCode, remote: string): void {
    const reason = code === ErrorCode.ILLEGAL_SASL_STATE ? 'state' : 'unsupported';
    this.onFailure(remote, session.chosenMechanism, new SaslFailure(reason, `SaslHandshake for ${mechanism.slice(0, 64)} refused`));
  }
}
