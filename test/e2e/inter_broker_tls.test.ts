// Brokers and controllers authenticating each other over TLS: three `sluice start` nodes whose
// inter-broker listener is their SASL_SSL client listener with client certificates required
// (replica fetchers verify the leader against ssl-ca-file and present their own certificate, then
// authenticate as the SCRAM-SHA-512 user `broker`), and whose controller listener is SASL_SSL
// too (--controller-security-protocol: quorum RPCs and broker RPCs authenticate as `broker` with
// the password file; the inter-broker user is a super user). kafkajs, with a client certificate and
// SCRAM, produces with acks=all to a topic of replication factor 3, every follower joins the ISR,
// and it consumes the values back. A follower of the quorum restarted with a wrong password can neither join the
// quorum nor register: it says so once per peer, the others log the refusal, and they keep serving.
// (Each node also has the harness's loopback PLAINTEXT listener, used here only for admin calls.)
import { after, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { KafkaConfig, SASLOptions } from 'kafkajs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TopicDescription } from '../../src/client/admin.js';
import { freePort, sleep, type BrokerProcess } from '../helpers/broker_process.js';
import { makeCertificates, makeClientCertificate, type TestCertificates } from '../helpers/certificates.js';
import { Kafka, logLevel } from '../helpers/kafkajs_client.js';
import { createScramUsers, describeTopic as describeBrokerTopic, produceToEveryPartition, replicatesWithFullIsrs } from '../helpers/inter_broker.js';
import { threeBrokers, withAdmin } from '../helpers/three_brokers.js';
import { until } from '../helpers/until.js';
import { describeQuorum } from '../../src/cli/dev_cluster.js';

const TOPIC = 'inter-broker-tls';
const PARTITIONS = 3;
const LAG_MS = 2000;

// Made before threeBrokers' hook runs (top-level await): ports, certificates, password files.
const work = mkdtempSync(join(tmpdir(), 'sluice-inter-broker-tls-'));
const certs: TestCertificates = await makeCertificates(work);
const alice = await makeClientCertificate(work, 'alice', '/CN=alice', certs);
const sslPorts: number[] = [];
const passwordFile = (id: number): string => join(work, `broker-${id}.password`);
for (let id = 1; id <= 3; id++) {
  sslPorts.push(await freePort());
  writeFileSync(passwordFile(id), 'broker-secret\n');
}
after(() => rmSync(work, { recursive: true, force: true }));

const brokers = threeBrokers({
  sessionMs: 2000,
  heartbeatMs: 300,
  listenersOf: (id) => [`SASL_SSL://127.0.0.1:${sslPorts[id - 1]!}`],
  argsOf: (id) => [
    '--ssl-cert-file', certs.cert, '--ssl-key-file', certs.key, '--ssl-ca-file', certs.ca, '--ssl-client-auth', 'required',
    '--sasl-enabled-mechanisms', 'SCRAM-SHA-512',
    '--inter-broker-listener', 'SASL_SSL', '--controller-security-protocol', 'SASL_SSL',
    '--inter-broker-sasl-username', 'broker', '--inter-broker-sasl-password-file', passwordFile(id),
    '--replica-lag-time-max-ms', String(LAG_MS),
    // alice, and the harness's admin calls on the loopback PLAINTEXT listener (ANONYMOUS there).
    '--super-users', 'User:alice;User:ANONYMOUS',
  ],
  // Replica fetchers authenticate with the metadata's SCRAM credential; the controller listener needs none.
  started: createScramUsers,
});

const describeTopic = (b: BrokerProcess): Promise<TopicDescription> => describeBrokerTopic(b, TOPIC);

const aliceClient = (port: number): KafkaConfig => ({
  clientId: 'inter-broker-tls-test', brokers: [`127.0.0.1:${port}`], logLevel: logLevel.NOTHING,
  ssl: { ca: [readFileSync(certs.ca)], cert: readFileSync(alice.cert), key: readFileSync(alice.key) },
  sasl: { mechanism: 'scram-sha-512', username: 'alice', password: 'alice-secret' } as SASLOptions,
  retry: { retries: 8 },
});

const produce = (values: readonly string[]): Promise<void> => produceToEveryPartition(aliceClient(sslPorts[0]!), TOPIC, PARTITIONS, values);

it('over SASL_SSL between brokers and to the controllers, followers join every ISR and a kafkajs client round-trips acks=all', async () => {
  await replicatesWithFullIsrs(brokers, TOPIC, PARTITIONS, aliceClient(sslPorts[0]!));

  const consumer = new Kafka(aliceClient(sslPorts[1]!)).consumer({ groupId: 'inter-broker-tls', sessionTimeout: 10_000 });
  const seen: string[] = [];
  await consumer.connect();
  try {
    await consumer.subscribe({ topic: TOPIC, fromBeginning: true });
    await consumer.run({ eachMessage: async ({ message }) => { seen.push(message.value?.toString() ?? ''); } });
    await until('every value consumed', 30_000, async () => seen.length, (n) => n >= PARTITIONS * 3);
  } finally {
    await consumer.disconnect();
  }
  assert.deepEqual([...seen].sort(), ['a', 'a', 'a', 'b', 'b', 'b', 'c', 'c', 'c']);
});

it('a node with a wrong password can neither join the quorum nor register, says so once per peer, and the others keep serving', async () => {
  // The victim is a follower of the quorum: restarted, it still knows the active controller from
  // its quorum state and sends it its registration. (A restarted leader knows no controller, and
  // with every vote refused it never learns one, so it could only report the voters' refusals.)
  const { leaderId } = await describeQuorum(brokers[0]!.kafkaPort);
  const victimId = [3, 2].find((id) => id !== leaderId)!;
  const others = [1, 2, 3].filter((id) => id !== victimId);
  const survivor = brokers[others[0]! - 1]!;
  const victim = brokers[victimId - 1]!;
  await victim.stop();
  writeFileSync(passwordFile(victimId), 'not-the-secret\n');
  const logOf = (b: BrokerProcess): string => readFileSync(b.logPath, 'utf8');
  const victimBefore = logOf(victim).length;
  const leader = brokers[leaderId - 1]!;
  const leaderBefore = logOf(leader).length;
  await victim.restart({ untilHealthy: false });
  const since = async (): Promise<string> => logOf(victim).slice(victimBefore);
  const peer = `(${others.join('|')})`;
  await until('the victim told it was refused', 30_000, since, (log) => new RegExp(`voter ${peer} refused this node's authentication`).test(log) && new RegExp(`controller ${peer} refused this node's authentication`).test(log));
  // The active controller refuses the victim on its controller listener and says so.
  await until('the leader logs the refusal', 10_000, async () => logOf(leader).slice(leaderBefore), (log) => log.includes('"listener":"CONTROLLER"') && log.includes('failed authentication'));
  await produce(['d', 'e']);
  await sleep(LAG_MS * 2);
  const refusals = (await since()).split('\n').filter((l) => l.includes('refused this node\'s authentication'));
  assert.match(refusals[0]!, /refused SCRAM-SHA-512 authentication as broker/);
  assert.ok(refusals.every((l) => !l.includes('not-the-secret')), 'the password is never logged');
  // Once per peer and role: retries are not logged again.
  const peers = refusals.map((l) => /(voter|controller) \d/.exec(l)![0]);
  assert.equal(new Set(peers).size, peers.length, `repeated lines: ${peers.join(', ')}`);
  const t = await describeTopic(survivor);
  for (const p of t.partitionDetails) assert.deepEqual([...p.isr].sort(), others, `partition ${p.partition}: ISR ${p.isr.join(',')}`);
  const standing = await withAdmin(survivor, (admin) => admin.describeBrokers());
  assert.equal(standing.find((b) => b.id === victimId)?.state, 'fenced', `node ${victimId} did not register again`);
  await victim.kill9();
});
