// Fetch send path bench (bench process, main thread): a broker child pre-filled with ~1 GiB in
// page cache, then one consumer catches up from offset 0, once with the broker's responses sent
// by the addon's sender (--io native: sendfile from segment files) and once through libuv
// (--io node: segment reads into Buffers, socket.write). Reports record-batch MB/s, the broker's
// CPU seconds (whole process, and its main thread alone from /proc/<pid>/task/<pid>/stat) and
// MB per main-thread CPU second. Every phase is bounded by BENCH_DEADLINE_MS.
// Run: node dist-<x>/bench/micro/fetch_send.js [MiB=1024] [partitions=4] [modes=native,node]
import { readFileSync } from 'node:fs';
import { BrokerProcess } from '../../src/bench/broker_process.js';
import { runCatchUp } from '../../src/bench/load/catch_up.js';
import { connectClient, createTopic, produceVersion } from '../../src/bench/load/kafka_setup.js';
import { runProduceLoad } from '../../src/bench/load/produce_load.js';

const RECORD_BYTES = 1024;
const BATCH_RECORDS = 256;
const BENCH_DEADLINE_MS = 120_000;
const FETCH = { maxWaitMs: 500, minBytes: 1, maxBytes: 52_428_800, partitionMaxBytes: 8_388_608 };

/** CPU seconds of the broker's main thread (its tid equals the pid). */
function mainThreadCpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/task/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / 100; // USER_HZ is 100 on Linux
}

interface Figures {
  mode: string;
  mib: number;
  seconds: number;
  mbPerSec: number;
  brokerCpuS: number;
  mainCpuS: number;
  mbPerMainCpuS: number;
  mbPerBrokerCpuS: number;
}

async function runMode(mode: 'native' | 'node', mib: number, partitions: number): Promise<Figures> {
  const b = await BrokerProcess.start({ flush: 'never', shards: 2, args: ['--io', mode] });
  try {
    const topic = 'fetch-send';
    const conn = await connectClient(b.host, b.kafkaPort, 'fetch-send-bench');
    await createTopic(conn, topic, partitions);
    const messages = Math.floor((mib * 1024 * 1024) / RECORD_BYTES);
    const fill = await runProduceLoad({
      host: b.host, port: b.kafkaPort, topic, partitions, connections: 1, inflight: 16, batchRecords: BATCH_RECORDS,
      recordBytes: RECORD_BYTES, acks: 1, messages, durationMs: BENCH_DEADLINE_MS, warmupMs: 0, version: produceVersion(conn), requestTimeoutMs: 30_000,
    });
    const cpu0 = b.cpuSeconds();
    const main0 = mainThreadCpuSeconds(b.pid);
    const r = await runCatchUp(conn, { topic, partitions, expectedRecords: fill.totalMessages, recordBytes: RECORD_BYTES, durationMs: BENCH_DEADLINE_MS, fetch: FETCH });
    const brokerCpuS = b.cpuSeconds() - cpu0;
    const mainCpuS = mainThreadCpuSeconds(b.pid) - main0;
    await conn.close();
    if (!r.complete) throw new Error(`${mode}: read ${r.records} of ${fill.totalMessages} records`);
    const mb = r.batchMbPerSec * r.seconds;
    return { mode, mib: Math.round(mb / 1.048576), seconds: r.seconds, mbPerSec: r.batchMbPerSec, brokerCpuS, mainCpuS, mbPerMainCpuS: mb / mainCpuS, mbPerBrokerCpuS: mb / brokerCpuS };
  } finally {
    await b.stop();
  }
}

const mib = Number(process.argv[2] ?? 1024);
const partitions = Number(process.argv[3] ?? 4);
const fmt = (n: number): string => n.toFixed(n >= 100 ? 0 : 2);
const modes = (process.argv[4] ?? 'native,node').split(',').filter((m): m is 'native' | 'node' => m === 'native' || m === 'node');
for (const mode of modes) {
  const f = await runMode(mode, mib, partitions);
  console.log(`${f.mode.padEnd(6)} ${f.mib} MiB in ${fmt(f.seconds)} s: ${fmt(f.mbPerSec)} MB/s | broker CPU ${fmt(f.brokerCpuS)} s (${fmt(f.mbPerBrokerCpuS)} MB/CPU-s) | main thread ${fmt(f.mainCpuS)} s (${fmt(f.mbPerMainCpuS)} MB/main-CPU-s)`);
}
