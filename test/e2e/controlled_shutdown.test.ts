// Controlled shutdown with real processes: three `sluice start` nodes, a topic of six partitions
// with replication factor 3 and leaders on all three, and one producer per partition sending
// acks=1 batches one at a time the way a Kafka client does (it follows the KIP-951 leader hint of
// a NOT_LEADER_OR_FOLLOWER answer, and after a connection error waits a retry backoff and asks
// another broker's Metadata). SIGTERM to a broker: it exits 0 well within the controlled-shutdown
// bound, its log says the controller granted the shutdown, Metadata from another broker right
// after the exit shows a new leader for every partition it led, and no producer meets more than
// one retriable error per partition, that one a NOT_LEADER_OR_FOLLOWER answer from the stopping
// broker (never a connection it closed while still leading); all keep being acknowledged
// afterwards. First a broker that
// is not the active controller, then (after the first comes back) the active controller itself.
// Leadership and client errors only: data does not replicate yet.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { sleep } from '../helpers/broker_process.js';
import { until } from '../helpers/until.js';
import { threeBrokers, withAdmin } from '../helpers/three_brokers.js';
import { connectTo, metadata } from '../helpers/read_back.js';
import type { KafkaConnection } from '../../src/client/connection.js';
import type { QuorumReport } from '../../src/actors/quorum/quorum_report.js';
import { ProduceApi } from '../../src/protocol/apis/produce.js';
import { ErrorCode, errorName } from '../../src/protocol/errors.js';
import { encodeRecordBatch } from '../../src/protocol/records.js';

const TOPIC = 'rolling';
const PARTITIONS = 6;
const HEARTBEAT_MS = 300;
/** The default --controlled-shutdown-timeout-ms. */
const SHUTDOWN_BOUND_MS = 5000;
/** A client's wait before it retries after a failure (librdkafka's retry.backoff.ms). */
const RETRY_BACKOFF_MS = 100;
const brokers = threeBrokers({
  sessionMs: 3000,
  heartbeatMs: HEARTBEAT_MS,
  logLevel: 'info',
  started: (started) => withAdmin(started[0]!, async (admin) => void (await admin.createTopics(TOPIC, PARTITIONS, 3))),
});

/** Partition leaders as broker `id` reports them in one Metadata answer. */
async function leaders(id: number): Promise<number[]> {
  const conn = await connectTo(brokers[id - 1]!.kafkaPort);
  try {
    const topic = (await metadata(conn, [TOPIC])).topics[0]!;
    assert.equal(topic.errorCode, ErrorCode.NONE);
    return topic.partitions.sort((a, b) => a.partitionIndex - b.partitionIndex).map((p) => p.leaderId);
  } finally {
    await conn.close();
  }
}

/**
 * Leaders as broker `id` reports them once it reports one for every partition: a broker can
 * answer for a new topic before the leaders elected with it reach its image.
 */
async function everyPartitionLed(id: number): Promise<number[]> {
  return until(`broker ${id} reports a leader for every partition`, 10_000, () => leaders(id), (led) => led.every((leader) => leader > 0));
}

async function activeController(): Promise<number> {
  const asked = brokers.find((b) => b.running)!;
  const res = await fetch(`http://127.0.0.1:${asked.adminPort}/v1/quorum`, { signal: AbortSignal.timeout(5000) });
  return ((await res.json()) as QuorumReport).leaderId;
}

/** Connections to the brokers by id, opened on first use and dropped on failure. */
class Pool {
  private readonly conns = new Map<number, Promise<KafkaConnection>>();

  get(id: number): Promise<KafkaConnection> {
    let c = this.conns.get(id);
    if (c === undefined) {
      c = connectTo(brokers[id - 1]!.kafkaPort, 'shutdown-producer');
      // A failed connect is reported to the caller that awaits it; the pool only forgets it.
      c.catch(() => this.conns.delete(id));
      this.conns.set(id, c);
    }
    return c;
  }

  drop(id: number): void {
    const c = this.conns.get(id);
    this.conns.delete(id);
    void c?.then((conn) => conn.close(), () => undefined);
  }

  close(): void {
    for (const id of [...this.conns.keys()]) this.drop(id);
  }
}

/** One partition's producer: acks=1, one request at a time, errors kept as the client saw them. */
class PartitionProducer {
  readonly errors: string[] = [];
  acked = 0;
  private stopped = false;
  private readonly done: Promise<void>;

  constructor(private readonly partition: number, private leader: number, private readonly pool: Pool) {
    this.done = this.run();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.done;
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      const target = this.leader;
      try {
        const conn = await this.pool.get(target);
        const records = encodeRecordBatch([{ key: null, value: Buffer.from(`p${this.partition}-${this.acked}`), timestamp: Date.now() }]);
        const res = await conn.request(ProduceApi, {
          transactionalId: null, acks: 1, timeoutMs: 5000, topicData: [{ name: TOPIC, partitionData: [{ index: this.partition, records }] }],
        }, 10);
        const part = res.responses[0]!.partitionResponses[0]!;
        if (part.errorCode === ErrorCode.NONE) {
          this.acked++;
          await sleep(20);
          continue;
        }
        this.errors.push(`${errorName(part.errorCode)} from ${target}`);
        if (part.errorCode === ErrorCode.NOT_LEADER_OR_FOLLOWER && part.currentLeader.leaderId > 0) {
          this.leader = part.currentLeader.leaderId;
          continue;
        }
      } catch (err) {
        this.errors.push(`${(err as Error).message} from ${target}`);
        this.pool.drop(target);
      }
      await sleep(RETRY_BACKOFF_MS);
      this.leader = await this.refresh(target);
    }
  }

  /** The partition's leader as another broker than `failed` reports it (any that answers). */
  private async refresh(failed: number): Promise<number> {
    for (const id of [1, 2, 3]) {
      if (id === failed) continue;
      try {
        const leader = (await leaders(id))[this.partition]!;
        if (leader > 0) return leader;
      } catch {
        // That broker is down too; ask the next one.
      }
    }
    return this.leader;
  }
}

/** SIGTERMs broker `victim` under acks=1 load and checks leadership and what the clients saw. */
async function stopUnderLoad(victim: number): Promise<void> {
  const survivor = [1, 2, 3].find((id) => id !== victim)!;
  const before = await everyPartitionLed(survivor);
  const led = before.flatMap((leader, p) => (leader === victim ? [p] : []));
  assert.ok(led.length > 0, `broker ${victim} leads no partition: ${before}`);
  const pool = new Pool();
  const producers = before.map((leader, p) => new PartitionProducer(p, leader, pool));
  try {
    await until('every partition takes produces before the stop', 15_000, async () => producers.map((p) => p.acked), (acked) => acked.every((n) => n >= 10));
    const started = performance.now();
    const status = await brokers[victim - 1]!.stop();
    const stopMs = performance.now() - started;
    const moved = await leaders(survivor);
    assert.deepEqual(status, { code: 0, signal: null });
    assert.ok(stopMs < SHUTDOWN_BOUND_MS, `stop took ${stopMs.toFixed(0)} ms`);
    for (const p of led) assert.ok(moved[p]! > 0 && moved[p] !== victim, `partition ${p} is led by ${moved[p]} right after broker ${victim} exited`);
    assert.match(readFileSync(brokers[victim - 1]!.logPath, 'utf8'), /controlled shutdown granted/);
    const ackedAtStop = producers.map((p) => p.acked);
    await sleep(1000);
    for (const [p, producer] of producers.entries()) {
      assert.ok(producer.errors.length <= 1, `partition ${p}: ${producer.errors.join('; ')}`);
      // The broker never closes a connection on a client that still takes it for the leader.
      for (const e of producer.errors) assert.equal(e, `NOT_LEADER_OR_FOLLOWER from ${victim}`, `partition ${p}`);
      assert.ok(producer.acked > ackedAtStop[p]!, `partition ${p} is acknowledged again after the stop`);
    }
    process.stderr.write(`# broker ${victim} stopped in ${stopMs.toFixed(0)} ms; errors per partition ${producers.map((p) => p.errors.length).join(',')}\n`);
  } finally {
    await Promise.all(producers.map((p) => p.stop()));
    pool.close();
  }
}

it('a broker that is not the active controller hands its leaderships over before it exits, with at most one retriable error per partition', async () => {
  const controller = await activeController();
  await stopUnderLoad([1, 2, 3].find((id) => id !== controller)!);
});

it('the active controller does the same after the first broker is back', async () => {
  const down = brokers.findIndex((b) => !b.running) + 1;
  await brokers[down - 1]!.restart();
  const controller = await activeController();
  assert.notEqual(controller, down);
  await stopUnderLoad(controller);
});
