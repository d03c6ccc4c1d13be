// Test helper: three `sluice start` processes on loopback forming one cluster, every one a voter
// of the metadata quorum, for end-to-end tests of replication and failover. Registers the test
// file's hooks: the brokers start together before its tests (each waits for a quorum), a failed
// test keeps their logs, and they are disposed of after. Runs on the test's main thread.
import { after, afterEach, before } from 'node:test';
import { BrokerProcess, freePort } from './broker_process.js';
import { KafkaAdmin } from '../../src/client/admin.js';

export interface ThreeBrokerOptions {
  readonly sessionMs: number;
  readonly heartbeatMs: number;
  readonly logLevel?: string;
  /** More client listeners of node `id` (1-3), after the PLAINTEXT one (BrokerStartOptions.listeners). */
  readonly listenersOf?: (id: number) => readonly string[];
  /** More command-line arguments for node `id` (1-3). */
  readonly argsOf?: (id: number) => readonly string[];
  /** Called once the three are up (e.g. to create the suite's topic). */
  readonly started?: (brokers: readonly BrokerProcess[]) => Promise<void>;
}

/** Each started cluster's --controller-voters and broker timings, for nodes joining it. */
const joinArgs = new WeakMap<BrokerProcess[], readonly string[]>();

/** The cluster's brokers, by node id - 1; filled in before the file's first test. */
export function threeBrokers(opts: ThreeBrokerOptions): BrokerProcess[] {
  const brokers: BrokerProcess[] = [];
  before(async () => {
    const controllerPorts = [await freePort(), await freePort(), await freePort()];
    const voters = controllerPorts.map((p, i) => `${i + 1}@127.0.0.1:${p}`).join(',');
    joinArgs.set(brokers, ['--controller-voters', voters, '--broker-session-timeout-ms', String(opts.sessionMs), '--broker-heartbeat-interval-ms', String(opts.heartbeatMs)]);
    const starts = await Promise.allSettled([1, 2, 3].map((id) => BrokerProcess.start({
      shards: 1,
      ...(opts.logLevel === undefined ? {} : { logLevel: opts.logLevel }),
      ...(opts.listenersOf === undefined ? {} : { listeners: opts.listenersOf(id) }),
      args: [
        '--node-id', String(id), '--controller-voters', voters, '--broker-session-timeout-ms', String(opts.sessionMs), '--broker-heartbeat-interval-ms', String(opts.heartbeatMs),
        ...(opts.argsOf?.(id) ?? []),
      ],
      startTimeoutMs: 60_000,
    })));
    // Those that did start are kept for `after` to dispose of, or they would outlive the test file.
    for (const s of starts) if (s.status === 'fulfilled') brokers.push(s.value);
    const failed = starts.find((s) => s.status === 'rejected');
    if (failed !== undefined) throw failed.reason;
    await opts.started?.(brokers);
  });
  afterEach((t) => {
    for (const b of brokers) b.noteResult(t);
  });
  after(async () => {
    await Promise.all(brokers.map((b) => b.dispose()));
  });
  return brokers;
}

/**
 * Starts broker-only node `id` (an observer of the quorum, not a voter) joining the cluster of
 * `brokers`, appended to them so it is disposed of with them.
 */
export async function joinBroker(brokers: BrokerProcess[], id: number, args: readonly string[] = []): Promise<BrokerProcess> {
  const cluster = joinArgs.get(brokers);
  if (cluster === undefined) throw new Error('joinBroker: the cluster has not started');
  const b = await BrokerProcess.start({ shards: 1, args: ['--node-id', String(id), ...cluster, ...args], startTimeoutMs: 60_000 });
  brokers.push(b);
  return b;
}

/** Runs `run` with an admin client connected to broker `b`, closed afterwards. */
export async function withAdmin<T>(b: BrokerProcess, run: (admin: KafkaAdmin) => Promise<T>): Promise<T> {
  const admin = await KafkaAdmin.connect({ host: b.host, port: b.kafkaPort, requestTimeoutMs: 20_000 });
  try {
    return await run(admin);
  } finally {
    await admin.close();
  }
}
