// The client side of SCRAM (RFC 5802): builds client-first and client-final messages from a
// password and checks the server's signature. Replica fetchers authenticate to an inter-broker
// SASL listener with it (any thread); tests drive ScramServer with it as a real client does.
import { createHash, createHmac, pbkdf2Sync } from 'node:crypto';
import type { ScramMechanism } from './sasl_mechanisms.js';

const HASH = { 'SCRAM-SHA-256': ['sha256', 32], 'SCRAM-SHA-512': ['sha512', 64] } as const;

export class ScramClient {
  private bare = '';
  private authMessage = '';
  private salted = Buffer.alloc(0);

  constructor(
    readonly mechanism: ScramMechanism,
    private readonly user: string,
    private readonly password: string,
    private readonly nonce: string,
  ) {}

  first(): string {
    const name = this.user.replace(/=/g, '=3D').replace(/,/g, '=2C');
    this.bare = `n=${name},r=${this.nonce}`;
    return `n,,${this.bare}`;
  }

  /** The client-final message answering `serverFirst`. */
  final(serverFirst: string): string {
    const attrs = new Map(serverFirst.split(',').map((p) => [p[0]!, p.slice(2)]));
    const [hash, bytes] = HASH[this.mechanism];
    this.salted = pbkdf2Sync(Buffer.from(this.password, 'utf8'), Buffer.from(attrs.get('s')!, 'base64'), Number(attrs.get('i')), bytes, hash);
    const withoutProof = `c=biws,r=${attrs.get('r')!}`;
    this.authMessage = `${this.bare},${serverFirst},${withoutProof}`;
    const clientKey = createHmac(hash, this.salted).update('Client Key').digest();
    const storedKey = createHash(hash).update(clientKey).digest();
    const signature = createHmac(hash, storedKey).update(this.authMessage).digest();
    const proof = Buffer.alloc(bytes);
    for (let i = 0; i < bytes; i++) proof[i] = clientKey[i]! ^ signature[i]!;
    return `${withoutProof},p=${proof.toString('base64')}`;
  }

  /** Whether the server-final message proves the server knew the credential. */
  verifies(serverFinal: string): boolean {
    const [hash] = HASH[this.mechanism];
    const serverKey = createHmac(hash, this.salted).update('Server Key').digest();
    return serverFinal === `v=${createHmac(hash, serverKey).update(this.authMessage).digest('base64')}`;
  }
}
