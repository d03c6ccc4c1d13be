// What SSL and SASL listeners read from disk and share (main thread): the TLS certificate, key
// and CA files as node:tls secure-context options, PLAIN's user file, and the admin HTTP's bearer
// token file (its TLS files are TlsMaterial too). All are read at start
// and again on reload() (the broker calls it on SIGHUP); a reload that fails (a missing or bad
// file) keeps what was loaded before and says why, so a half-written certificate never takes a
// listener down. The mTLS principal is the client certificate's subject, as Kafka's default
// principal builder names it.
import { readFileSync } from 'node:fs';
import type { Socket } from 'node:net';
import { TLSSocket, type PeerCertificate, type SecureContextOptions } from 'node:tls';
import { secretsEqual } from '../common/sasl_mechanisms.js';
import type { SslClientAuth } from '../config.js';

/** Bound on PLAIN users: each is a map entry held for the broker's life. */
export const MAX_PLAIN_USERS = 100_000;

/** Parses PLAIN's user file: one NAME:PASSWORD per line (the first ':' splits), '#' comments and blank lines skipped. */
export function parsePlainUsers(text: string): Map<string, Buffer> {
  const users = new Map<string, Buffer>();
  for (const [i, line] of text.split('\n').entries()) {
    const entry = line.replace(/\r$/, '');
    if (entry.trim() === '' || entry.trimStart().startsWith('#')) continue;
    const colon = entry.indexOf(':');
    if (colon <= 0) throw new Error(`line ${i + 1}: expected NAME:PASSWORD`);
    const name = entry.slice(0, colon);
    if (users.has(name)) throw new Error(`line ${i + 1}: user ${name} appears twice`);
    if (users.size >= MAX_PLAIN_USERS) throw new Error(`more than ${MAX_PLAIN_USERS} users`);
    users.set(name, Buffer.from(entry.slice(colon + 1), 'utf8'));
  }
  return users;
}

/** PLAIN's users, from their file. */
export class PlainUsers {
  private users = new Map<string, Buffer>();

  constructor(private readonly path: string) {
    if (path !== '') this.users = parsePlainUsers(readFileSync(path, 'utf8'));
  }

  /** Reads the file again; throws (keeping the old users) when it cannot be read or parsed. */
  reload(): void {
    if (this.path !== '') this.users = parsePlainUsers(readFileSync(this.path, 'utf8'));
  }

  get size(): number {
    return this.users.size;
  }

  /** Constant-time in the password; an unknown user is compared against a dummy so it takes as long. */
  verify(user: string, password: Buffer): boolean {
    const want = this.users.get(user);
    const equal = secretsEqual(want ?? Buffer.alloc(0), password);
    return want !== undefined && equal;
  }
}

/** A bearer token held in a file (the admin HTTP's): its content less surrounding whitespace. */
export class BearerToken {
  private token: Buffer;

  constructor(private readonly path: string) {
    this.token = BearerToken.read(path);
  }

  private static read(path: string): Buffer {
    const token = readFileSync(path, 'utf8').trim();
    if (token === '') throw new Error(`${path} holds no token`);
    return Buffer.from(token, 'utf8');
  }

  /** Reads the file again; throws (keeping the old token) when it cannot be read or is empty. */
  reload(): void {
    this.token = BearerToken.read(this.path);
  }

  /** The Authorization header that carries this token (for this broker's requests to its peers' admin HTTP). */
  authorization(): string {
    return `Bearer ${this.token.toString('utf8')}`;
  }

  /** Whether an Authorization header carries this token (RFC 6750's scheme); constant-time in the token. */
  admits(authorization: string | undefined): boolean {
    const presented = /^Bearer +(\S+) *$/i.exec(authorization ?? '')?.[1] ?? '';
    return secretsEqual(this.token, Buffer.from(presented, 'utf8'));
  }
}

export interface TlsFilePaths {
  readonly certFile: string;
  readonly keyFile: string;
  readonly caFile: string;
  readonly clientAuth: SslClientAuth;
}

/** node:tls server options from the files: certificate and key, and the CA and client-certificate request for mTLS. */
export class TlsMaterial {
  private current: SecureContextOptions;

  constructor(private readonly paths: TlsFilePaths) {
    this.current = this.read();
  }

  private read(): SecureContextOptions {
    return {
      cert: readFileSync(this.paths.certFile),
      key: readFileSync(this.paths.keyFile),
      ...(this.paths.caFile === '' ? {} : { ca: readFileSync(this.paths.caFile) }),
    };
  }

  /** The secure-context options as last loaded. */
  get context(): SecureContextOptions {
    return this.current;
  }

  get requestCert(): boolean {
    return this.paths.clientAuth !== 'none';
  }

  get requireCert(): boolean {
    return this.paths.clientAuth === 'required';
  }

  /** Reads the files again; throws (keeping the old material) when one cannot be read. */
  reload(): SecureContextOptions {
    this.current = this.read();
    return this.current;
  }
}

/** Kafka's default SSL principal: the subject's attributes as "CN=a,OU=b,O=c". */
export function subjectPrincipal(cert: PeerCertificate): string {
  const subject = cert.subject as unknown as Record<string, string | string[]> | undefined;
  if (subject === undefined) return 'ANONYMOUS';
  const parts = Object.entries(subject).flatMap(([k, v]) => (Array.isArray(v) ? v.map((x) => `${k}=${x}`) : [`${k}=${v}`]));
  return parts.length === 0 ? 'ANONYMOUS' : parts.join(',');
}

/** The user a TLS client's verified certificate names (its subject, CN=...: principal User:CN=...), or null without one. */
export function peerUser(socket: Socket): string | null {
  if (!(socket instanceof TLSSocket) || !socket.authorized) return null;
  const cert = socket.getPeerCertificate();
  return Object.keys(cert).length === 0 ? null : subjectPrincipal(cert);
}
