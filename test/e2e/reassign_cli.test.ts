// `sluice reassign` end to end against real `sluice start` processes: three brokers with topics
// holding data, a fourth joining. `plan` stores a plan whose moves meet the lower bound and whose
// dry-run batches are those `apply` submits; `apply` balances the new broker in and ends done with
// every record still there; `cancel` of a throttled apply leaves every partition on a replica set
// it had (the original, or the target of a move already done; a cancel restores the set, not
// always its order, as Kafka's does) and `rollback` (no driver left)
// restores the exact assignment and throttle configs from before the plan; `apply` run again after
// its driver was killed (-9) mid-move resumes the plan to done, and a rollback after that still
// restores the assignment from before the first apply; a stale plan and commands with nothing
// running are refused.
import { spawn } from 'node:child_process';
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { BROKER_MAIN, type BrokerProcess } from '../helpers/broker_process.js';
import { joinBroker, threeBrokers, withAdmin } from '../helpers/three_brokers.js';
import { connectedProducer, kafkajsClient } from '../helpers/kafkajs_client.js';
import { runCli } from '../../src/cli/main.js';
import { Cluster, isStaleMetadataError } from '../../src/client/cluster.js';
import { KafkaError } from '../../src/protocol/errors.js';
import { listOffsets } from '../../src/client/consumer/offsets.js';
import { tpKey } from '../../src/client/consumer/topic_partitions.js';
import type { CliIo } from '../../src/cli/io.js';
import { until } from '../helpers/until.js';

const brokers = threeBrokers({ sessionMs: 2000, heartbeatMs: 300 });

interface Ran {
  readonly code: number;
  readonly out: string;
  readonly err: string;
}

const bootstrap = (): string => brokers.slice(0, 3).map((b) => `127.0.0.1:${b.kafkaPort}`).join(',');

async function cli(...args: string[]): Promise<Ran> {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIo = { env: {}, out: (t) => void out.push(t), err: (t) => void err.push(t) };
  const code = await runCli(['reassign', ...args, '--brokers', bootstrap()], io);
  return { code, out: out.join('\n'), err: err.join('\n') };
}

/** Every partition's replica list of `topic`, by partition. */
async function assignment(topic: string): Promise<number[][]> {
  const t = await withAdmin(brokers[0]!, (a) => a.describeTopic(topic));
  return t.partitionDetails.map((p) => p.replicas);
}

async function fill(topic: string, partitions: number, perPartition: number, bytes: number): Promise<void> {
  await withAdmin(brokers[0]!, (a) => a.createTopics(topic, partitions, 2));
  await until(`${topic} has leaders`, 20_000, () => withAdmin(brokers[0]!, (a) => a.describeTopic(topic)), (t) => t.partitionDetails.every((p) => p.leader > 0 && p.isr.length === 2));
  const producer = await connectedProducer(kafkajsClient(`127.0.0.1:${brokers[0]!.kafkaPort}`, `fill-${topic}`, 20), { idempotent: true, maxInFlightRequests: 1 });
  try {
    for (let p = 0; p < partitions; p++) {
      for (let i = 0; i < perPartition; i += 20) {
        await producer.send({ topic, acks: -1, messages: Array.from({ length: Math.min(20, perPartition - i) }, (_, k) => ({ partition: p, value: `${p}-${i + k}-`.padEnd(bytes, 'x') })) });
      }
    }
  } finally {
    await producer.disconnect();
  }
}

/**
 * The record count of each partition (high watermark - log start), asked of each partition's
 * leader; asked again (bounded) while a leader the metadata named has not yet learned of its
 * leadership, which a client retries (NOT_LEADER_OR_FOLLOWER, as any Kafka broker answers then).
 */
async function counts(topic: string, partitions: number): Promise<number[]> {
  const cluster = new Cluster({ brokers: [`127.0.0.1:${brokers[0]!.kafkaPort}`] });
  try {
    const tps = Array.from({ length: partitions }, (_, partition) => ({ topic, partition }));
    const asked = await until(`offsets of ${topic}`, 10_000, () => Promise.all([listOffsets(cluster, tps, 'earliest'), listOffsets(cluster, tps, 'latest')]).catch((err: unknown) => {
      if (err instanceof KafkaError && isStaleMetadataError(err.code)) return null;
      throw err;
    }), (v) => v !== null);
    const [start, end] = asked!;
    return tps.map((tp) => end.get(tpKey(topic, tp.partition))! - start.get(tpKey(topic, tp.partition))!);
  } finally {
    await cluster.close();
  }
}

let joined: BrokerProcess;

it('refuses commands while nothing was planned or applied', async () => {
  const status = await cli('status');
  assert.equal(status.code, 2, status.err);
  assert.match(status.err, /no reassignment/);
  const pause = await cli('pause');
  assert.equal(pause.code, 2);
});

it('plans the fewest moves to balance a joined broker in, and apply runs exactly the dry run to done with every record kept', async () => {
  await fill('grow', 8, 200, 200);
  // Placed before broker 4 joins, so the next test has moves to make.
  await fill('slow', 6, 400, 1000);
  joined = await joinBroker(brokers, 4);
  await until('broker 4 registered', 30_000, () => withAdmin(brokers[0]!, (a) => a.describeBrokers()), (bs) => bs.some((b) => b.id === 4 && b.state !== 'fenced'));
  const planned = await cli('plan', '--topics', 'grow', '--sample-ms', '0', '--format', 'json');
  assert.equal(planned.code, 0, planned.err);
  const plan = JSON.parse(planned.out) as { id: string; moves: { topic: string; partition: number; to: number[] }[]; report: { replicaMoves: number; lowerBound: number }; batches: { topic: string; partition: number; replicas: number[] }[][] };
  // 16 replicas over 4 brokers: broker 4 takes 4 of them, and no plan can do with fewer moves.
  assert.equal(plan.report.lowerBound, 4);
  assert.equal(plan.report.replicaMoves, 4);
  assert.deepEqual(plan.batches.flat().map((b) => `${b.topic}:${b.partition}`).sort(), plan.moves.map((m) => `${m.topic}:${m.partition}`).sort());
  const status = await cli('status', '--format', 'json');
  assert.equal(JSON.parse(status.out).state, 'planned');

  const applied = await cli('apply', '--observation-ms', '0', '--baseline-ms', '1000', '--poll-ms', '200', '--format', 'json');
  assert.equal(applied.code, 0, applied.err);
  const lines = applied.out.split('\n').map((l) => JSON.parse(l) as { state: string; batch: { number: number } | null });
  assert.equal(lines.at(-1)!.state, 'done');
  const after = await assignment('grow');
  for (const m of plan.moves) assert.deepEqual(after[m.partition], m.to, `partition ${m.partition} on its target`);
  assert.equal(after.flat().filter((b) => b === 4).length, 4, 'broker 4 holds its share');
  assert.deepEqual(await counts('grow', 8), Array(8).fill(200));
  const done = JSON.parse((await cli('status', '--format', 'json')).out) as { state: string; percent: number; moves: { done: number; total: number } };
  assert.deepEqual([done.state, done.percent, done.moves.done], ['done', 100, plan.moves.length]);
  // Running the same plan twice is refused: the cluster no longer looks as it assumed.
  const again = await cli('apply');
  assert.equal(again.code, 2);
  assert.match(again.err, /already applied|changed since/);
});

it('cancel of a throttled apply leaves original or completed replica sets; rollback without a driver restores the exact assignment and configs', async () => {
  const before = await assignment('slow');
  const planned = await cli('plan', '--topics', 'slow', '--sample-ms', '0', '--per-broker', '1', '--format', 'json');
  assert.equal(planned.code, 0, planned.err);
  const plan = JSON.parse(planned.out) as { moves: { partition: number; from: number[]; to: number[] }[] };
  assert.ok(plan.moves.length >= 2, `moves: ${plan.moves.length}`);
  // 1 KiB/s: a 400 KB copy cannot finish before the cancel.
  const applying = cli('apply', '--observation-ms', '0', '--baseline-ms', '1000', '--poll-ms', '200', '--max-rate', '1024');
  await until('a batch in flight', 30_000, () => cli('status', '--format', 'json'), (r) => r.code === 0 && (JSON.parse(r.out) as { state: string; moves?: { inFlight: number } }).moves?.inFlight !== undefined && (JSON.parse(r.out) as { moves: { inFlight: number } }).moves.inFlight > 0);
  const described = await withAdmin(brokers[0]!, (a) => a.describeConfigs([{ type: 'topic', name: 'slow' }], ['follower.replication.throttled.replicas']));
  assert.notEqual(described[0]!.configs.find((c) => c.name === 'follower.replication.throttled.replicas')?.value ?? '', '', 'the moving replicas are throttled');
  const cancelled = await cli('cancel');
  assert.equal(cancelled.code, 0, cancelled.err);
  const applyEnd = await applying;
  assert.equal(applyEnd.code, 0, applyEnd.err);
  const afterCancel = await assignment('slow');
  const set = (l: readonly number[]): string => [...l].sort().join();
  for (const m of plan.moves) {
    const now = set(afterCancel[m.partition]!);
    assert.ok(now === set(m.from) || now === set(m.to), `partition ${m.partition}: ${now} is neither ${set(m.from)} nor ${set(m.to)}`);
  }
  assert.deepEqual(await withAdmin(brokers[0]!, (a) => a.listPartitionReassignments()), []);

  const rolled = await cli('rollback', '--timeout-ms', '120000');
  assert.equal(rolled.code, 0, rolled.err);
  assert.deepEqual(await assignment('slow'), before, 'the exact replica lists from before the plan');
  const configs = await withAdmin(brokers[0]!, (a) => a.describeConfigs([{ type: 'topic', name: 'slow' }], ['leader.replication.throttled.replicas', 'follower.replication.throttled.replicas']));
  for (const c of configs[0]!.configs) assert.notEqual(c.source, 'DYNAMIC_TOPIC_CONFIG', `${c.name} is back to unset`);
  assert.deepEqual(await counts('slow', 6), Array(6).fill(400));
  assert.equal(JSON.parse((await cli('status', '--format', 'json')).out).state, 'rolled-back');
  assert.ok(joined.kafkaPort > 0);
});

it('apply run again after its driver was killed (-9) mid-move resumes the plan to done; rollback then restores the assignment from before it', async () => {
  const before = await assignment('slow');
  const planned = await cli('plan', '--topics', 'slow', '--sample-ms', '0', '--per-broker', '1', '--format', 'json');
  assert.equal(planned.code, 0, planned.err);
  const plan = JSON.parse(planned.out) as { moves: { partition: number; to: number[] }[] };
  assert.ok(plan.moves.length >= 2, `moves: ${plan.moves.length}`);
  // A driver in its own process, throttled to 1 KiB/s so that its first batch is still copying when it dies.
  const driver = spawn(process.execPath, [BROKER_MAIN, 'reassign', 'apply', '--observation-ms', '0', '--baseline-ms', '1000', '--poll-ms', '200', '--max-rate', '1024', '--brokers', bootstrap()], { stdio: 'ignore' });
  const statusOf = async (): Promise<{ state: string; driverLive: boolean; moves?: { inFlight: number } }> => JSON.parse((await cli('status', '--format', 'json')).out);
  try {
    await until('a batch in flight', 30_000, statusOf, (s) => (s.moves?.inFlight ?? 0) > 0);
  } finally {
    driver.kill('SIGKILL');
  }
  await until('the driver seen gone', 40_000, statusOf, (s) => !s.driverLive);
  const resumed = await cli('apply', '--observation-ms', '0', '--baseline-ms', '1000', '--poll-ms', '200');
  assert.equal(resumed.code, 0, resumed.err);
  assert.match(resumed.err, /resuming plan/);
  const after = await assignment('slow');
  for (const m of plan.moves) assert.deepEqual(after[m.partition], m.to, `partition ${m.partition} on its target`);
  assert.deepEqual(await counts('slow', 6), Array(6).fill(400));
  assert.equal((await statusOf()).state, 'done');
  // The snapshot is still the dead driver's, taken before anything moved.
  const rolled = await cli('rollback', '--timeout-ms', '120000');
  assert.equal(rolled.code, 0, rolled.err);
  assert.deepEqual(await assignment('slow'), before);
});
