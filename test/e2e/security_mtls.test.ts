// mTLS, the admin HTTP's HTTPS and bearer token, and the warning for listeners open to the
// network, against one real broker process: an SSL listener on 0.0.0.0 with
// --ssl-client-auth required, a PLAINTEXT listener OPEN on 0.0.0.0 (the one that warns), and the
// admin HTTP on 0.0.0.0 over HTTPS with a token. kcat and kafka-python present a client
// certificate signed by the test CA and round-trip records; the principal logged is the
// certificate's subject, which is also the client-quota user; a client without a certificate is
// refused. Traffic stays on loopback:
// the wildcard addresses are only bound.
import { after, afterEach, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KafkaAdmin } from '../../src/client/admin.js';
import { BrokerProcess, freePort } from '../helpers/broker_process.js';
import { makeCertificates, makeClientCertificate, type TestCertificates } from '../helpers/certificates.js';
import { run } from '../helpers/child.js';
import { KCAT, kcatRoundTrip } from '../helpers/kcat.js';
import { kafkaPythonRoundTrip } from '../helpers/kafka_python.js';

const HOST = '127.0.0.1';
const TOKEN = 'admin-token-7f3a';
const CLIENT_SUBJECT = 'CN=orders-app,O=sluice-test';

let work: string;
let broker: BrokerProcess;
let certs: TestCertificates;
let client: { cert: string; key: string };
let sslPort: number;
let openPort: number;

/** GET over HTTPS trusting the test CA; the status, WWW-Authenticate and body. */
function adminGet(path: string, token?: string): Promise<{ status: number; challenge: string | undefined; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({
      host: HOST, port: broker.adminPort, path, ca: readFileSync(certs.ca), timeout: 10_000,
      headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
    }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, challenge: res.headers['www-authenticate'], body: Buffer.concat(chunks).toString() }));
    });
    req.on('timeout', () => req.destroy(new Error(`${path} timed out`)));
    req.on('error', reject);
    req.end();
  });
}

const sslArgs = (withCert: boolean): string[] => [
  '-b', `${HOST}:${sslPort}`, '-X', 'security.protocol=SSL', '-X', `ssl.ca.location=${certs.ca}`,
  ...(withCert ? ['-X', `ssl.certificate.location=${client.cert}`, '-X', `ssl.key.location=${client.key}`] : []),
];

before(async () => {
  work = mkdtempSync(join(tmpdir(), 'sluice-mtls-'));
  certs = await makeCertificates(work);
  client = await makeClientCertificate(work, 'client', '/CN=orders-app/O=sluice-test', certs);
  const tokenFile = join(work, 'admin-token');
  writeFileSync(tokenFile, `${TOKEN}\n`);
  sslPort = await freePort();
  openPort = await freePort();
  broker = await BrokerProcess.start({
    shards: 1,
    // Debug level: the accepted certificate's principal is logged there.
    logLevel: 'debug',
    listeners: [`SSL://0.0.0.0:${sslPort}`, `OPEN://0.0.0.0:${openPort}`],
    adminBind: '0.0.0.0',
    adminCaFile: certs.ca,
    args: [
      '--listener-security-protocol-map', 'OPEN:PLAINTEXT',
      // A wildcard is no address to advertise: clients are told loopback.
      '--advertised-listeners', `SSL://${HOST}:${sslPort},OPEN://${HOST}:${openPort}`,
      '--ssl-cert-file', certs.cert, '--ssl-key-file', certs.key, '--ssl-ca-file', certs.ca, '--ssl-client-auth', 'required',
      '--admin-ssl-cert-file', certs.cert, '--admin-ssl-key-file', certs.key, '--admin-token-file', tokenFile,
      // It tests authentication, not ACLs: with an SSL listener nothing is open without them.
      '--allow-everyone-if-no-acl-found', 'true',
    ],
  });
  const admin = await KafkaAdmin.connect({ host: HOST, port: broker.kafkaPort });
  try {
    await admin.createTopics('mtls-kcat', 1, 1, {});
    await admin.createTopics('mtls-python', 1, 1, {});
    await admin.createTopics('mtls-quota', 1, 1, {});
  } finally {
    await admin.close();
  }
});
afterEach((t) => broker?.noteResult(t));
after(async () => {
  await broker?.dispose();
  if (work !== undefined) rmSync(work, { recursive: true, force: true });
});

describe('SSL listener with --ssl-client-auth required', () => {
  it('kcat with a client certificate signed by the CA round-trips; the principal is its subject', async () => {
    assert.deepEqual(await kcatRoundTrip(sslArgs(true), 'mtls-kcat', ['a', 'b', 'c']), ['a', 'b', 'c']);
    assert.ok(readFileSync(broker.logPath, 'utf8').includes(`"principal":"${CLIENT_SUBJECT}"`), `no principal ${CLIENT_SUBJECT} in the broker log`);
  });

  it('kcat without a client certificate is refused', async () => {
    const r = await run(KCAT, [...sslArgs(false), '-L', '-m', '3'], { timeoutMs: 30_000 });
    assert.notEqual(r.code, 0, 'no metadata without a client certificate');
  });

  it('kafka-python over SSL with a client certificate produces and consumes', async () => {
    const settings = { bootstrap_servers: `${HOST}:${sslPort}`, security_protocol: 'SSL', ssl_cafile: certs.ca, ssl_certfile: client.cert, ssl_keyfile: client.key };
    assert.deepEqual(await kafkaPythonRoundTrip(settings, 'mtls-python', 3), ['py-0', 'py-1', 'py-2']);
  });
});

describe('client quotas under mTLS', () => {
  it('charge the certificate subject as the user: a produce quota on it throttles kcat, the default user quota does not apply', async () => {
    const admin = await KafkaAdmin.connect({ host: HOST, port: broker.kafkaPort });
    const subject = [{ entityType: 'user', entityName: CLIENT_SUBJECT }];
    const anyUser = [{ entityType: 'user', entityName: null }];
    const throttled = async (): Promise<number> => {
      const m = /^sluice_quota_throttled_responses_total\{quota="produce"\} (\d+)/m.exec((await adminGet('/metrics', TOKEN)).body);
      return Number(m?.[1] ?? 0);
    };
    try {
      // One byte a second: kcat's first batch (well past ten windows' allowance) is throttled.
      await admin.alterClientQuotas([
        { entity: subject, ops: [{ key: 'producer_byte_rate', value: 1, remove: false }] },
        // Were the user still ANONYMOUS (or any other name), this higher default would be the one to apply.
        { entity: anyUser, ops: [{ key: 'producer_byte_rate', value: 1e9, remove: false }] },
      ]);
      const before = await throttled();
      const r = await run(KCAT, [...sslArgs(true), '-t', 'mtls-quota', '-P'], { timeoutMs: 30_000, input: Buffer.from(`${'q'.repeat(200)}\n`) });
      assert.equal(r.code, 0, r.stderr);
      assert.ok(await throttled() > before, 'the produce was throttled under the subject\'s quota');
      const described = await admin.describeClientQuotas([{ entityType: 'user', matchType: 0, match: CLIENT_SUBJECT }], true);
      assert.deepEqual(described.map((e) => e.entity), [subject]);
    } finally {
      await admin.alterClientQuotas([subject, anyUser].map((entity) => ({ entity, ops: [{ key: 'producer_byte_rate', value: 0, remove: true }] })));
      await admin.close();
    }
  });
});

describe('admin HTTP over HTTPS with a token, and the exposure warning', () => {
  it('answers 401 with a Bearer challenge without the token, a bare health status to anyone', async () => {
    const metrics = await adminGet('/metrics');
    assert.equal(metrics.status, 401);
    assert.match(metrics.challenge ?? '', /^Bearer/);
    assert.equal((await adminGet('/metrics', 'not-it')).status, 401);
    assert.match((await adminGet('/metrics', TOKEN)).body, /sluice_connections/);
    const bare = await adminGet('/v1/health');
    assert.equal(bare.status, 200);
    assert.deepEqual(JSON.parse(bare.body), { status: 'ready' });
    await assert.rejects(fetch(`http://${HOST}:${broker.adminPort}/v1/health`, { signal: AbortSignal.timeout(5000) }), 'no plain HTTP on the HTTPS port');
  });

  it('names the unauthenticated non-loopback listener in /v1/health and in the log, once', async () => {
    const health = JSON.parse((await adminGet('/v1/health', TOKEN)).body) as { security: { warnings: string[] } };
    assert.equal(health.security.warnings.length, 1, health.security.warnings.join('\n'));
    assert.match(health.security.warnings[0]!, new RegExp(`^listener OPEN \\(PLAINTEXT\\) on 0\\.0\\.0\\.0:${openPort} accepts unauthenticated clients`));
    const logged = readFileSync(broker.logPath, 'utf8').split('\n').filter((l) => l.includes('listener OPEN (PLAINTEXT)'));
    assert.equal(logged.length, 1, logged.join('\n'));
  });
});
