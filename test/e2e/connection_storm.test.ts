// A connection storm against one broker of three (issue 15 item 4): while a kafkajs producer
// writes acks=all to an RF 3 partition led by that broker, 2,000 loopback connections arrive in
// bursts, each sending ApiVersions and Metadata and staying open, as a fleet reconnecting after
// leaders moved would. The per-IP bounds must hold the storm (no more answered than
// max.connections.per.ip leaves room for, the rest refused and counted in
// sluice_connections_rejected_total), the followers' replica fetches must keep flowing (the ISR
// never shrinks, though replica.lag.time.max.ms is short), produce must stay acknowledged with a
// bounded p99; a follower restarted while the storm holds the address's cap must rejoin the ISR
// (its fetcher admitted as a broker's), and once the storm is gone a new kafkajs client connects.
// Every client shares 127.0.0.1 with the brokers, so the storm and the fetchers share an address.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import type { BrokerProcess } from '../helpers/broker_process.js';
import { threeBrokers, withAdmin } from '../helpers/three_brokers.js';
import { connectedProducer, kafkajsClient } from '../helpers/kafkajs_client.js';
import { requestFrame } from '../helpers/raw_socket.js';
import { until } from '../helpers/until.js';
import { ApiVersionsApi } from '../../src/protocol/apis/api_versions.js';
import { MetadataApi } from '../../src/protocol/apis/metadata.js';

const TOPIC = 'storm';
const PER_IP = 64;
const CREATION_RATE = 400;
const ATTEMPTS = 2000;
const BURST = 100;
const BURST_EVERY_MS = 200;
const REPLICA_LAG_MS = 3000;
/** A storm connection's answer, or its refusal, must come within this; then it counts as hung. */
const ATTEMPT_TIMEOUT_MS = 10_000;
const PRODUCE_P99_BOUND_MS = 2000;

const brokers = threeBrokers({
  sessionMs: 4000,
  heartbeatMs: 400,
  argsOf: () => [
    '--max-connections-per-ip', String(PER_IP), '--max-connection-creation-rate', String(CREATION_RATE),
    '--replica-lag-time-max-ms', String(REPLICA_LAG_MS),
  ],
});

const STORM_REQUESTS = Buffer.concat([
  requestFrame(ApiVersionsApi, 3, 1, { clientSoftwareName: 'storm', clientSoftwareVersion: '1' }),
  requestFrame(MetadataApi, 12, 2, {
    topics: null, allowAutoTopicCreation: false, includeClusterAuthorizedOperations: false, includeTopicAuthorizedOperations: false,
  }),
]);

type Outcome = 'answered' | 'refused' | 'hung';

/** One storm connection: sends its requests, resolves on the first answer bytes or the close; the socket stays open when answered. */
function stormConnection(port: number, open: Socket[]): Promise<Outcome> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    open.push(socket);
    const timer = setTimeout(() => resolve('hung'), ATTEMPT_TIMEOUT_MS);
    const settle = (o: Outcome): void => {
      clearTimeout(timer);
      resolve(o);
    };
    socket.on('connect', () => socket.write(STORM_REQUESTS));
    socket.once('data', () => settle('answered'));
    socket.on('error', () => undefined);
    socket.on('close', () => settle('refused'));
  });
}

/** `attempts` storm connections in bursts; they stay open (in `open`) until the caller ends them. */
async function storm(port: number, attempts: number, open: Socket[]): Promise<Outcome[]> {
  const pending: Array<Promise<Outcome>> = [];
  for (let sent = 0; sent < attempts; sent += BURST) {
    for (let i = 0; i < Math.min(BURST, attempts - sent); i++) pending.push(stormConnection(port, open));
    await sleep(BURST_EVERY_MS);
  }
  return Promise.all(pending);
}

function p99(samples: readonly number[]): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))]!;
}

it('a bounded connection storm is refused by the per-IP bounds while replication and acks=all produce go on', async (t) => {
  await withAdmin(brokers[0]!, (admin) => admin.createTopics(TOPIC, 1, 3));
  const described = await until('a leader and a full ISR', 20_000, () => withAdmin(brokers[0]!, (a) => a.describeTopic(TOPIC)),
    (t) => t.partitionDetails[0]!.leader > 0 && t.partitionDetails[0]!.isr.length === 3);
  const leaderId = described.partitionDetails[0]!.leader;
  const leader = brokers[leaderId - 1]!;
  // The ISR is read through a broker the storm does not hit: the stormed one would refuse new admin connections.
  const observer: BrokerProcess = brokers.find((b) => b !== leader)!;

  const producer = await connectedProducer(kafkajsClient(leader.bootstrap, 'storm-producer', 0));
  const latencies: number[] = [];
  let produceErrors = 0;
  let stopProducing = false;
  const producing = (async () => {
    for (let i = 0; !stopProducing; i++) {
      const started = performance.now();
      try {
        await producer.send({ topic: TOPIC, acks: -1, messages: [{ value: `m-${i}` }] });
        latencies.push(performance.now() - started);
      } catch {
        produceErrors++;
      }
    }
  })();
  const isrSizes: number[] = [];
  let stopWatching = false;
  const watching = (async () => {
    while (!stopWatching) {
      const topic = await withAdmin(observer, (a) => a.describeTopic(TOPIC));
      isrSizes.push(topic.partitionDetails[0]!.isr.length);
      await sleep(300);
    }
  })();

  const stormSockets: Socket[] = [];
  try {
    await sleep(500);
    const produced0 = latencies.length;
    const outcomes = await storm(leader.kafkaPort, ATTEMPTS, stormSockets);
    // The storm's connections stay open past a replica lag time, so a starved fetcher would show.
    await sleep(REPLICA_LAG_MS + 500);
    stopProducing = true;
    stopWatching = true;
    await producing;
    await watching;
    const answered = outcomes.filter((o) => o === 'answered').length;
    const refused = outcomes.filter((o) => o === 'refused').length;
    t.diagnostic(`storm: ${answered} answered, ${refused} refused of ${ATTEMPTS}`);
    assert.equal(outcomes.filter((o) => o === 'hung').length, 0, 'every storm connection was answered or refused in time');
    assert.ok(answered <= PER_IP, `${answered} storm connections answered, above the per-IP cap of ${PER_IP}`);
    assert.ok(refused >= ATTEMPTS - PER_IP, `only ${refused} of ${ATTEMPTS} storm connections refused`);
    const rejected = (await leader.metric('sluice_connections_rejected_total{reason="per-ip-cap"}'))
      + (await leader.metric('sluice_connections_rejected_total{reason="creation-rate"}'));
    assert.ok(rejected >= refused, `sluice_connections_rejected_total counts ${rejected} per-IP refusals, the storm saw ${refused}`);
    assert.ok(latencies.length - produced0 > 10, `only ${latencies.length - produced0} acks=all sends acknowledged during the storm`);
    assert.equal(produceErrors, 0, 'every acks=all send was acknowledged');
    assert.ok(isrSizes.length > 5, 'the ISR was watched throughout');
    assert.deepEqual([...new Set(isrSizes)], [3], 'the ISR never shrank');
    const produceP99 = p99(latencies);
    t.diagnostic(`acks=all produce: ${latencies.length} acknowledged, p99 ${produceP99.toFixed(1)} ms; ISR sizes seen ${[...new Set(isrSizes)].join(',')}`);
    assert.ok(produceP99 < PRODUCE_P99_BOUND_MS, `acks=all produce p99 ${produceP99.toFixed(1)} ms`);

    // With the storm holding the address's cap, a follower restarts: its replica fetcher reconnects
    // to the stormed leader from the same address and must be admitted, or it never rejoins the ISR.
    const follower = observer;
    await follower.stop();
    // Whatever the stopped follower held on the leader goes back to the storm.
    await storm(leader.kafkaPort, BURST, stormSockets);
    assert.equal(await stormConnection(leader.kafkaPort, stormSockets), 'refused', 'the storm holds the per-IP cap');
    await follower.restart();
    const other = brokers.find((b) => b !== leader && b !== follower)!;
    await until('the restarted follower back in the ISR during the storm', 30_000, () => withAdmin(other, (a) => a.describeTopic(TOPIC)),
      (topic) => topic.partitionDetails[0]!.isr.includes(brokers.indexOf(follower) + 1));
    assert.ok(await leader.metric('sluice_broker_connections_admitted_total') > 0, 'the fetcher was admitted as a broker');
  } finally {
    stopProducing = true;
    stopWatching = true;
    await producing;
    await watching;
    await producer.disconnect();
    for (const socket of stormSockets) socket.destroy();
  }

  // The storm is gone: a fresh client connects to the stormed broker and is acknowledged.
  const after = await connectedProducer(kafkajsClient(leader.bootstrap, 'after-storm', 2));
  try {
    const [ack] = await after.send({ topic: TOPIC, acks: -1, messages: [{ value: 'after' }] });
    assert.equal(ack?.errorCode, 0);
  } finally {
    await after.disconnect();
  }
});
