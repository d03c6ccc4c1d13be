// Certificates are reloaded without a restart: one broker whose client listener and controller
// listener both speak SSL (client certificates required) serves certificate A; the files are
// overwritten with certificate B and the process gets SIGHUP; new connections to both listeners
// are then served B, and a client still round-trips records on the SSL listener with kcat.
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { X509Certificate } from 'node:crypto';
import { connect, type PeerCertificate } from 'node:tls';
import { BrokerProcess, freePort } from '../helpers/broker_process.js';
import { makeCertificates, makeClientCertificate, type TestCertificates } from '../helpers/certificates.js';
import { run } from '../helpers/child.js';
import { until } from '../helpers/until.js';

const HOST = '127.0.0.1';
const TOPIC = 'tls-reload';

let work: string;
let broker: BrokerProcess;
let certsA: TestCertificates;
let certsB: TestCertificates;
let client: { cert: string; key: string };
let sslPort: number;
let controllerPort: number;
const certFile = (): string => join(work, 'server.pem');
const keyFile = (): string => join(work, 'server.key');

/** The fingerprint of the certificate a new TLS connection to `port` is served (client certificate presented). */
function servedFingerprint(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: HOST, port, rejectUnauthorized: false, cert: readFileSync(client.cert), key: readFileSync(client.key), timeout: 10_000 }, () => {
      const peer: PeerCertificate = socket.getPeerCertificate();
      socket.destroy();
      resolve(peer.fingerprint256);
    });
    socket.on('timeout', () => socket.destroy(new Error(`TLS handshake with port ${port} timed out`)));
    socket.on('error', reject);
  });
}

function fingerprintOf(pemFile: string): string {
  return new X509Certificate(readFileSync(pemFile)).fingerprint256;
}

before(async () => {
  work = mkdtempSync(join(tmpdir(), 'sluice-tls-reload-'));
  mkdirSync(join(work, 'a'));
  mkdirSync(join(work, 'b'));
  certsA = await makeCertificates(join(work, 'a'));
  certsB = await makeCertificates(join(work, 'b'));
  client = await makeClientCertificate(join(work, 'a'), 'client', '/CN=reload-test', certsA);
  copyFileSync(certsA.cert, certFile());
  copyFileSync(certsA.key, keyFile());
  sslPort = await freePort();
  controllerPort = await freePort();
  broker = await BrokerProcess.start({
    shards: 1,
    listeners: [`SSL://${HOST}:${sslPort}`],
    args: [
      '--controller-addr', `${HOST}:${controllerPort}`, '--controller-security-protocol', 'SSL',
      // The CA stays A's: it checks client certificates, which do not change here.
      '--ssl-cert-file', certFile(), '--ssl-key-file', keyFile(), '--ssl-ca-file', certsA.ca, '--ssl-client-auth', 'required',
      '--allow-everyone-if-no-acl-found', 'true', '--super-users', 'User:CN=reload-test',
    ],
  });
});

after(async () => {
  await broker?.dispose();
  rmSync(work, { recursive: true, force: true });
});

it('SIGHUP serves the new certificate on the client and controller listeners, and clients keep working', async () => {
  const a = fingerprintOf(certsA.cert);
  const b = fingerprintOf(certsB.cert);
  assert.notEqual(a, b);
  assert.equal(await servedFingerprint(sslPort), a);
  assert.equal(await servedFingerprint(controllerPort), a);

  copyFileSync(certsB.cert, certFile());
  copyFileSync(certsB.key, keyFile());
  process.kill(broker.pid, 'SIGHUP');
  await until('the client listener serving B', 10_000, () => servedFingerprint(sslPort), (f) => f === b);
  assert.equal(await servedFingerprint(controllerPort), b, 'the controller listener serves B too');

  // kcat trusting B's CA round-trips a record over the reloaded listener.
  const ssl = ['-b', `${HOST}:${sslPort}`, '-X', 'security.protocol=SSL', '-X', `ssl.ca.location=${certsB.ca}`,
    '-X', `ssl.certificate.location=${client.cert}`, '-X', `ssl.key.location=${client.key}`];
  const produced = await run('kcat', [...ssl, '-P', '-t', TOPIC], { input: Buffer.from('after-reload\n'), timeoutMs: 30_000 });
  assert.equal(produced.code, 0, produced.stderr);
  const consumed = await run('kcat', [...ssl, '-C', '-t', TOPIC, '-o', 'beginning', '-c', '1', '-e'], { timeoutMs: 30_000 });
  assert.equal(consumed.code, 0, consumed.stderr);
  assert.equal(consumed.stdout.toString().trim(), 'after-reload');
});
