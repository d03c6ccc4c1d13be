// Replica fetchers authenticating between brokers: three `sluice start` nodes whose clients use a
// SASL_SSL listener and whose replica fetchers reach each other on INTERNAL, a SASL_PLAINTEXT
// listener, as the SCRAM-SHA-512 user `broker` (--inter-broker-listener and friends). The user is
// created once the nodes are up (the followers of __consumer_offsets, placed at start, are refused
// until then and retry). kafkajs produces with acks=all
// over SASL_SSL to a topic of replication factor 3 and every follower joins the ISR; node 3
// restarted with a wrong inter-broker password stays out of every ISR and says why in its log.
// ACLs are enforced and grant `broker` nothing: its CLUSTER_ACTION comes from being the
// inter-broker user (an implicit super user).
// (Each node also has the harness's loopback PLAINTEXT listener, used here only for admin calls.)
import { after, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { KafkaConfig, SASLOptions } from 'kafkajs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TopicDescription } from '../../src/client/admin.js';
import { freePort, sleep, type BrokerProcess } from '../helpers/broker_process.js';
import { makeCertificates, type TestCertificates } from '../helpers/certificates.js';
import { logLevel } from '../helpers/kafkajs_client.js';
import { createScramUsers, describeTopic as describeBrokerTopic, produceToEveryPartition, replicatesWithFullIsrs } from '../helpers/inter_broker.js';
import { threeBrokers } from '../helpers/three_brokers.js';
import { until } from '../helpers/until.js';

const TOPIC = 'inter-broker-sasl';
const PARTITIONS = 3;
const LAG_MS = 2000;

// Made before threeBrokers' hook runs (top-level await): ports, certificates, password files.
const work = mkdtempSync(join(tmpdir(), 'sluice-inter-broker-'));
const certs: TestCertificates = await makeCertificates(work);
const sslPorts: number[] = [];
const internalPorts: number[] = [];
const passwordFile = (id: number): string => join(work, `broker-${id}.password`);
for (let id = 1; id <= 3; id++) {
  sslPorts.push(await freePort());
  internalPorts.push(await freePort());
  writeFileSync(passwordFile(id), 'broker-secret\n');
}
after(() => rmSync(work, { recursive: true, force: true }));

const brokers = threeBrokers({
  sessionMs: 2000,
  heartbeatMs: 300,
  listenersOf: (id) => [`SASL_SSL://127.0.0.1:${sslPorts[id - 1]!}`, `INTERNAL://127.0.0.1:${internalPorts[id - 1]!}`],
  argsOf: (id) => [
    '--listener-security-protocol-map', 'INTERNAL:SASL_PLAINTEXT',
    '--ssl-cert-file', certs.cert, '--ssl-key-file', certs.key, '--sasl-enabled-mechanisms', 'SCRAM-SHA-512',
    '--inter-broker-listener', 'INTERNAL', '--inter-broker-sasl-mechanism', 'SCRAM-SHA-512',
    '--inter-broker-sasl-username', 'broker', '--inter-broker-sasl-password-file', passwordFile(id),
    '--replica-lag-time-max-ms', String(LAG_MS),
    // ACLs are enforced (SASL listeners: nothing is open without them) and nothing grants `broker`
    // CLUSTER_ACTION: followers fetch only because the inter-broker user is an implicit super user.
    '--super-users', 'User:ANONYMOUS;User:alice',
  ],
  started: createScramUsers,
});

const describeTopic = (b: BrokerProcess): Promise<TopicDescription> => describeBrokerTopic(b, TOPIC);

const alice: KafkaConfig = {
  clientId: 'inter-broker-test', brokers: [`127.0.0.1:${sslPorts[0]!}`], logLevel: logLevel.NOTHING,
  ssl: { ca: [readFileSync(certs.ca)] },
  sasl: { mechanism: 'scram-sha-512', username: 'alice', password: 'alice-secret' } as SASLOptions,
  retry: { retries: 8 },
};

const produceOverSaslSsl = (values: readonly string[]): Promise<void> => produceToEveryPartition(alice, TOPIC, PARTITIONS, values);

it('followers authenticate to the leaders\' SASL inter-broker listener and join every ISR', async () => {
  await replicatesWithFullIsrs(brokers, TOPIC, PARTITIONS, alice);
});

it('a node with a wrong inter-broker password stays out of every ISR and logs why', async () => {
  const node3 = brokers[2]!;
  await node3.stop();
  writeFileSync(passwordFile(3), 'not-the-secret\n');
  // Its start-up refusals (before the user existed) are in the log already.
  const restartedAt = readFileSync(node3.logPath, 'utf8').length;
  await node3.restart();
  await produceOverSaslSsl(['d', 'e']);
  const since = async (): Promise<string> => readFileSync(node3.logPath, 'utf8').slice(restartedAt);
  await until('the refusal in node 3\'s log', 30_000, since, (log) => log.includes('replica fetcher cannot authenticate to the leader'));
  const line = (await since()).split('\n').find((l) => l.includes('replica fetcher cannot authenticate'))!;
  assert.match(line, /refused SCRAM-SHA-512 authentication as broker/);
  assert.ok(!line.includes('not-the-secret'), 'the password is never logged');
  // Several lag times: a follower that could fetch would be back by now.
  await sleep(LAG_MS * 3);
  const t = await describeTopic(brokers[0]!);
  for (const p of t.partitionDetails) {
    assert.ok(!p.isr.includes(3), `partition ${p.partition}: node 3 in ISR ${p.isr.join(',')}`);
    assert.equal(p.isr.length, 2, `partition ${p.partition}: ISR ${p.isr.join(',')}`);
  }
});
