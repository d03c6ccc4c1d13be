// Test certificates made with openssl in a temp dir at test time (test main thread): a CA, a
// server certificate for 127.0.0.1/localhost and client certificates signed by it (mTLS).
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { run } from './child.js';

export interface TestCertificates {
  readonly ca: string;
  readonly caKey: string;
  readonly cert: string;
  readonly key: string;
}

async function openssl(args: readonly string[]): Promise<void> {
  const r = await run('openssl', args, { timeoutMs: 30_000 });
  assert.equal(r.code, 0, `openssl ${args.join(' ')}: ${r.stderr}`);
}

/** A certificate for `subject` signed by the CA, with `extensions` (an openssl extfile's lines); its PEM and key paths. */
async function signed(dir: string, name: string, subject: string, ca: { ca: string; caKey: string }, extensions: string): Promise<{ cert: string; key: string }> {
  const p = (f: string): string => join(dir, f);
  await openssl(['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', p(`${name}.key`), '-out', p(`${name}.csr`), '-subj', subject]);
  writeFileSync(p(`${name}.ext`), extensions);
  await openssl(['x509', '-req', '-in', p(`${name}.csr`), '-CA', ca.ca, '-CAkey', ca.caKey, '-CAcreateserial', '-out', p(`${name}.pem`), '-days', '1', '-extfile', p(`${name}.ext`)]);
  return { cert: p(`${name}.pem`), key: p(`${name}.key`) };
}

/** A CA and a server certificate for 127.0.0.1/localhost signed by it, in `dir`. */
export async function makeCertificates(dir: string): Promise<TestCertificates> {
  const ca = join(dir, 'ca.pem');
  const caKey = join(dir, 'ca.key');
  await openssl(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', caKey, '-out', ca, '-days', '1', '-subj', '/CN=sluice-test-ca']);
  const server = await signed(dir, 'server', '/CN=localhost', { ca, caKey }, 'subjectAltName=IP:127.0.0.1,DNS:localhost\n');
  return { ca, caKey, ...server };
}

/** A client certificate for `subject` (e.g. /CN=app/O=team) signed by the test CA, for mTLS. */
export function makeClientCertificate(dir: string, name: string, subject: string, ca: TestCertificates): Promise<{ cert: string; key: string }> {
  return signed(dir, name, subject, ca, 'extendedKeyUsage=clientAuth\n');
}
