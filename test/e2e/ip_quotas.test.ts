// KIP-612's ip quotas against a real broker process: `sluice quota alter --ip 127.0.0.1 --add
// connection_creation_rate=1` (AlterClientQuotas with an `ip` entity) makes a burst of new
// connections from that address mostly refused (one admitted at once, one delayed to its slot, the
// rest past the 1 s a connection may wait) while a kafkajs producer connected before keeps
// producing on its open connections; `sluice quota describe` lists the entity; once it is deleted
// a burst is answered whole and a new kafkajs producer connects. (kafkajs and kafka-python have
// no client-quota admin calls, so our CLI sets the quota; every client shares 127.0.0.1.)
import { after, afterEach, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { BrokerProcess } from '../helpers/broker_process.js';
import { sluice } from '../helpers/cli_run.js';
import { connectedProducer, kafkajsClient } from '../helpers/kafkajs_client.js';
import { requestFrame } from '../helpers/raw_socket.js';
import { ApiVersionsApi } from '../../src/protocol/apis/api_versions.js';

const TOPIC = 'ip-quota';
const BURST = 10;
/** An attempt neither answered nor closed by then counts as hung (a delayed one waits at most 1 s). */
const ATTEMPT_TIMEOUT_MS = 10_000;
/** Longer than any slot the burst reserved at 1 connection/s, so the CLI's own connection is admitted. */
const SETTLE_MS = 2500;

let broker: BrokerProcess;

before(async () => {
  broker = await BrokerProcess.start({ shards: 1, args: ['--num-partitions', '1'] });
});
afterEach((t) => broker?.noteResult(t));
after(async () => broker?.dispose());

type Outcome = 'answered' | 'refused' | 'hung';

/** A new connection sending ApiVersions: answered, or closed without an answer (refused). */
function attempt(port: number): Promise<Outcome> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    const settle = (o: Outcome): void => {
      clearTimeout(timer);
      socket.destroy();
      resolve(o);
    };
    const timer = setTimeout(() => settle('hung'), ATTEMPT_TIMEOUT_MS);
    socket.on('connect', () => socket.write(requestFrame(ApiVersionsApi, 3, 1, { clientSoftwareName: 'burst', clientSoftwareVersion: '1' })));
    socket.once('data', () => settle('answered'));
    socket.on('error', () => undefined);
    socket.on('close', () => settle('refused'));
  });
}

const burst = (): Promise<Outcome[]> => Promise.all(Array.from({ length: BURST }, () => attempt(broker.kafkaPort)));
const count = (outcomes: readonly Outcome[], o: Outcome): number => outcomes.filter((x) => x === o).length;

async function quota(...args: string[]): Promise<string> {
  const r = await sluice(['quota', ...args, '--brokers', broker.bootstrap]);
  assert.equal(r.code, 0, r.stderr);
  return r.stdout;
}

it('an ip quota bounds new connections from that address, open ones keep working, and deleting it lifts the bound', async () => {
  const producer = await connectedProducer(kafkajsClient(broker.bootstrap, 'ip-quota-before'), { allowAutoTopicCreation: true });
  try {
    await producer.send({ topic: TOPIC, messages: [{ value: 'before' }] });

    await quota('alter', '--ip', '127.0.0.1', '--add', 'connection_creation_rate=1');
    assert.deepEqual(JSON.parse(await quota('describe', '--ip', '127.0.0.1', '--format', 'json')), [
      { entity: 'ip=127.0.0.1', values: { connection_creation_rate: 1 } },
    ]);
    await sleep(SETTLE_MS);
    const limited = await burst();
    assert.equal(count(limited, 'hung'), 0, JSON.stringify(limited));
    // One at once and one at its slot 1 s later; the loaded host may let a third through, never most.
    assert.ok(count(limited, 'answered') <= 3, `answered ${count(limited, 'answered')} of ${BURST} at 1 connection/s`);
    assert.ok(count(limited, 'refused') >= BURST - 3, JSON.stringify(limited));
    await producer.send({ topic: TOPIC, messages: [{ value: 'during' }] });

    await sleep(SETTLE_MS);
    await quota('alter', '--ip', '127.0.0.1', '--delete', 'connection_creation_rate');
    assert.deepEqual(JSON.parse(await quota('describe', '--ip', '127.0.0.1', '--format', 'json')), []);
    assert.deepEqual(await burst(), Array.from({ length: BURST }, () => 'answered'));
    const after = await connectedProducer(kafkajsClient(broker.bootstrap, 'ip-quota-after'));
    await after.send({ topic: TOPIC, messages: [{ value: 'after' }] });
    await after.disconnect();
  } finally {
    await producer.disconnect();
  }
});
