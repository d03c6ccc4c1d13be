// Listeners with TLS and SASL, driven by real clients against a real broker process: kcat
// (librdkafka; the README's SASL_SSL example), kafkajs and kafka-python authenticate with
// SCRAM-SHA-256, SCRAM-SHA-512 and PLAIN over TLS, produce and read back; wrong passwords,
// unknown users, plaintext against the TLS port and requests before authentication are refused;
// Metadata on a listener names that listener's port; a credential written offline with
// `sluice user create --data-dir` works after a restart. Test certificates are made with openssl
// in a temp dir at test time.
import { after, afterEach, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { SASLOptions } from 'kafkajs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KafkaAdmin } from '../../src/client/admin.js';
import { BrokerProcess, freePort } from '../helpers/broker_process.js';
import { makeCertificates } from '../helpers/certificates.js';
import { run } from '../helpers/child.js';
import { sluice } from '../helpers/cli_run.js';
import { KCAT, kcatRoundTrip } from '../helpers/kcat.js';
import { kafkaPythonRoundTrip } from '../helpers/kafka_python.js';
import { Kafka, logLevel } from '../helpers/kafkajs_client.js';

const HOST = '127.0.0.1';
const TOPIC = 'secured';

let work: string;
let broker: BrokerProcess;
let sslPort: number;
let saslPlaintextPort: number;
let caFile: string;

function kcatArgs(port: number, mechanism: string, user: string, password: string): string[] {
  return [
    '-b', `${HOST}:${port}`, '-X', 'security.protocol=SASL_SSL', '-X', `sasl.mechanisms=${mechanism}`,
    '-X', `sasl.username=${user}`, '-X', `sasl.password=${password}`, '-X', `ssl.ca.location=${caFile}`,
  ];
}

before(async () => {
  work = mkdtempSync(join(tmpdir(), 'sluice-security-'));
  const certs = await makeCertificates(work);
  caFile = certs.ca;
  const plainUsers = join(work, 'plain-users');
  writeFileSync(plainUsers, '# PLAIN users\ncarol:carol-pw\n');
  sslPort = await freePort();
  saslPlaintextPort = await freePort();
  broker = await BrokerProcess.start({
    shards: 1,
    listeners: [`SASL_SSL://${HOST}:${sslPort}`, `SASL_PLAINTEXT://${HOST}:${saslPlaintextPort}`],
    args: [
      '--ssl-cert-file', certs.cert, '--ssl-key-file', certs.key,
      '--sasl-enabled-mechanisms', 'SCRAM-SHA-512,SCRAM-SHA-256,PLAIN', '--sasl-plain-users-file', plainUsers,
      '--connections-max-reauth-ms', '3600000',
      // Authentication only: with SASL listeners nothing is open unless ACLs say so (test/e2e/acl.test.ts covers those).
      '--allow-everyone-if-no-acl-found', 'true',
    ],
  });
  // Credentials through AlterUserScramCredentials on the plaintext listener.
  const admin = await KafkaAdmin.connect({ host: HOST, port: broker.kafkaPort });
  try {
    await admin.upsertScramCredential('alice', 'SCRAM-SHA-512', 'alice-pw');
    await admin.upsertScramCredential('bob', 'SCRAM-SHA-256', 'bob-pw', 8192);
    await admin.createTopics(TOPIC, 1, 1, {});
  } finally {
    await admin.close();
  }
});
afterEach((t) => broker?.noteResult(t));
after(async () => {
  await broker?.dispose();
  if (work !== undefined) rmSync(work, { recursive: true, force: true });
});

describe('SASL_SSL listener', () => {
  it('kcat: SCRAM-SHA-512 over TLS produces and consumes; Metadata names the SASL_SSL port', async () => {
    const args = kcatArgs(sslPort, 'SCRAM-SHA-512', 'alice', 'alice-pw');
    assert.deepEqual(await kcatRoundTrip(args, 'kcat-secured', ['one', 'two', 'three']), ['one', 'two', 'three']);
    const listing = await run(KCAT, [...args, '-L', '-t', 'kcat-secured'], { timeoutMs: 30_000 });
    assert.equal(listing.code, 0, listing.stderr);
    assert.match(listing.stdout.toString(), new RegExp(`broker 0 at 127\\.0\\.0\\.1:${sslPort}`));
  });

  for (const [mechanism, user, password] of [['scram-sha-256', 'bob', 'bob-pw'], ['scram-sha-512', 'alice', 'alice-pw'], ['plain', 'carol', 'carol-pw']] as const) {
    it(`kafkajs: ssl + ${mechanism} produces and consumes`, async () => {
      const kafka = new Kafka({
        clientId: `sec-${mechanism}`, brokers: [`${HOST}:${sslPort}`], logLevel: logLevel.NOTHING,
        ssl: { ca: [readFileSync(caFile)] },
        sasl: { mechanism, username: user, password } as SASLOptions,
        retry: { retries: 3 },
      });
      const producer = kafka.producer();
      await producer.connect();
      const values = [0, 1, 2].map((i) => `${mechanism}-${i}`);
      await producer.send({ topic: TOPIC, messages: values.map((value) => ({ value })) });
      await producer.disconnect();
      const consumer = kafka.consumer({ groupId: `g-${mechanism}` });
      await consumer.connect();
      await consumer.subscribe({ topic: TOPIC, fromBeginning: true });
      const seen = new Set<string>();
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`consumed only ${[...seen].join(',')}`)), 30_000);
        void consumer.run({
          eachMessage: async ({ message }) => {
            seen.add(message.value?.toString() ?? '');
            if (values.every((v) => seen.has(v))) {
              clearTimeout(timer);
              resolve();
            }
          },
        });
      });
      await consumer.disconnect();
    });
  }

  for (const [mechanism, user, password] of [['SCRAM-SHA-512', 'alice', 'alice-pw'], ['PLAIN', 'carol', 'carol-pw']] as const) {
    it(`kafka-python: ${mechanism} over TLS (SASL v0 raw tokens) produces and consumes`, async () => {
      const settings = {
        bootstrap_servers: `${HOST}:${sslPort}`, security_protocol: 'SASL_SSL', sasl_mechanism: mechanism,
        sasl_plain_username: user, sasl_plain_password: password, ssl_cafile: caFile,
      };
      assert.deepEqual(await kafkaPythonRoundTrip(settings, `py-${mechanism.toLowerCase()}`, 5), [0, 1, 2, 3, 4].map((i) => `py-${i}`));
    });
  }

  it('refuses a wrong password and an unknown user (after the failure delay), and plaintext on the TLS port', async () => {
    for (const [user, password] of [['alice', 'wrong'], ['mallory', 'alice-pw']]) {
      const started = performance.now();
      const r = await run(KCAT, [...kcatArgs(sslPort, 'SCRAM-SHA-512', user!, password!), '-L', '-m', '3'], { timeoutMs: 30_000 });
      assert.notEqual(r.code, 0);
      assert.match(r.stderr, /SASL authentication error: invalid credentials/);
      assert.ok(performance.now() - started >= 250, 'a failed authentication is answered after the delay');
    }
    const plaintext = await run(KCAT, ['-b', `${HOST}:${sslPort}`, '-L', '-m', '3'], { timeoutMs: 30_000 });
    assert.notEqual(plaintext.code, 0, 'a plaintext client gets no metadata from the TLS port');
    // The refusals were counted.
    assert.ok(await broker.metric('sluice_protocol_errors_total{reason="sasl-authentication"}') >= 2);
  });

  it('closes a connection that sends anything but ApiVersions or SASL before authenticating', async () => {
    // Metadata v0 for all topics: size, api 3, version 0, correlation 7, client id "x", empty topic list.
    const frame = Buffer.from([0, 0, 0, 15, 0, 3, 0, 0, 0, 0, 0, 7, 0, 1, 0x78, 0, 0, 0, 0]);
    const answer = await new Promise<Buffer>((resolve, reject) => {
      const socket = connect(saslPlaintextPort, HOST, () => socket.write(frame));
      const chunks: Buffer[] = [];
      socket.on('data', (c: Buffer) => chunks.push(c));
      socket.on('close', () => resolve(Buffer.concat(chunks)));
      socket.on('error', reject);
      setTimeout(() => reject(new Error('connection not closed')), 10_000);
    });
    assert.equal(answer.length, 0, 'no answer before authentication');
  });

  it('lists SCRAM users with their mechanisms and iterations, never a key', async () => {
    const r = await sluice(['user', 'list', '--brokers', `${HOST}:${broker.kafkaPort}`, '--format', 'json']);
    assert.equal(r.code, 0, r.stderr);
    const users = JSON.parse(r.stdout) as unknown;
    assert.deepEqual(users, [
      { user: 'alice', credentials: [{ mechanism: 'SCRAM-SHA-512', iterations: 4096 }] },
      { user: 'bob', credentials: [{ mechanism: 'SCRAM-SHA-256', iterations: 8192 }] },
    ]);
  });

  it('a credential written offline with user create --data-dir authenticates after a restart', async () => {
    await broker.stop();
    const passwordFile = join(work, 'dave-password');
    writeFileSync(passwordFile, 'dave-pw\n');
    const created = await sluice(['user', 'create', 'dave', '--mechanism', 'SCRAM-SHA-256', '--password-file', passwordFile, '--data-dir', broker.dataDir]);
    assert.equal(created.code, 0, created.stderr);
    await broker.restart();
    assert.deepEqual(await kcatRoundTrip(kcatArgs(sslPort, 'SCRAM-SHA-256', 'dave', 'dave-pw'), 'offline-user', ['d1']), ['d1']);
    const r = await run(KCAT, [...kcatArgs(sslPort, 'SCRAM-SHA-256', 'dave', 'not-dave'), '-L', '-m', '3'], { timeoutMs: 30_000 });
    assert.notEqual(r.code, 0);
  });
});
