// Micro-benchmark of the partition log's write path: validate + append batches of 100 x 1 KiB
// records and group-commit them, under flush policies 'never' and 'always', with 1 or several
// batches in flight per partition and 1 or 4 partitions sharing one committer (one shard).
// Usage: node <outDir>/bench/micro/log.js [dataDir]   (default: a fresh directory under /tmp)
// Every run is bounded by a byte budget and a time budget; the data directory is removed after.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { GroupCommitter, type FlushPolicy } from '../../src/log/group_commit.js';
import { NodeIoBackend } from '../../src/log/io_backend.js';
import { PartitionLog, type LogConfig } from '../../src/log/partition_log.js';
import { validateProducedBatch } from '../../src/protocol/record_batch.js';
import { buildBatch, makeRecords } from '../../test/unit/log/batch_builder.js';

const RECORDS_PER_BATCH = 100;
const RECORD_BYTES = 1024;
const TIME_BUDGET_MS = 5_000;

const config: LogConfig = {
  segmentBytes: 256 * 1024 * 1024,
  segmentMs: 7 * 24 * 3600 * 1000,
  retentionMs: -1,
  retentionBytes: -1,
  maxMessageBytes: 1024 * 1024,
  indexIntervalBytes: 4096,
  timestampType: 'CreateTime',
  producerIdExpirationMs: 24 * 3600 * 1000,
};

interface Scenario {
  policy: FlushPolicy;
  partitions: number;
  inFlightPerPartition: number;
  byteBudget: number;
}

interface Result {
  batches: number;
  bytes: number;
  ms: number;
  commits: number;
  avgLogsPerCommit: number;
}

/** One producer loop per partition keeps `inFlight` batches awaiting their commit. */
async function producer(log: PartitionLog, committer: GroupCommitter, template: Buffer, inFlight: number, until: () => boolean, count: { batches: number; bytes: number }): Promise<void> {
  const lane = async (): Promise<void> => {
    while (!until()) {
      const batch = Buffer.from(template); // the shard copies each batch out of its ring
      const v = validateProducedBatch(batch, config.maxMessageBytes);
      if (!v.ok) throw new Error(v.message);
      const r = log.appendBatch(batch, v.header);
      if (r.kind !== 'appended') throw new Error(`append refused: ${JSON.stringify(r)}`);
      await committer.commit(log);
      count.batches++;
      count.bytes += batch.length;
    }
  };
  await Promise.all(Array.from({ length: inFlight }, lane));
}

async function run(root: string, s: Scenario, template: Buffer): Promise<Result> {
  const io = new NodeIoBackend();
  const failures: Error[] = [];
  const committer = new GroupCommitter(io, s.policy, (err) => failures.push(err));
  const dirs = Array.from({ length: s.partitions }, (_, i) => join(root, `${s.policy.kind}-${s.partitions}-${s.inFlightPerPartition}-${i}`));
  const logs = dirs.map((d) => PartitionLog.open(d, config, io, Date.now));
  const count = { batches: 0, bytes: 0 };
  const start = performance.now();
  const until = (): boolean => count.bytes >= s.byteBudget || performance.now() - start > TIME_BUDGET_MS;
  await Promise.all(logs.map((log) => producer(log, committer, template, s.inFlightPerPartition, until, count)));
  const ms = performance.now() - start;
  const stats = committer.stats();
  await committer.close();
  for (const log of logs) log.deleteAll();
  if (failures.length > 0) throw failures[0];
  return { ...count, ms, commits: stats.commits, avgLogsPerCommit: stats.avgBatchLogs };
}

async function main(): Promise<void> {
  const root = process.argv[2] ?? mkdtempSync(join(tmpdir(), 'sluice-bench-log-'));
  const template = buildBatch({ records: makeRecords(RECORDS_PER_BATCH, RECORD_BYTES) });
  const scenarios: Scenario[] = [];
  for (const policy of [{ kind: 'never' }, { kind: 'always' }] as const) {
    for (const [partitions, inFlight] of [[1, 1], [1, 8], [4, 4]] as const) {
      scenarios.push({ policy, partitions, inFlightPerPartition: inFlight, byteBudget: (policy.kind === 'never' ? 512 : 256) * 1024 * 1024 });
    }
  }
  console.log(`batch: ${RECORDS_PER_BATCH} records x ${RECORD_BYTES} B = ${template.length} B; data in ${root}`);
  console.log('policy  parts  inflight/part   MB/s   batches/s  commits  batches/commit  logs/commit');
  try {
    for (const s of scenarios) {
      const r = await run(root, s, template);
      const mbps = r.bytes / 1e6 / (r.ms / 1000);
      console.log(
        `${s.policy.kind.padEnd(7)} ${String(s.partitions).padStart(5)} ${String(s.inFlightPerPartition).padStart(14)} ${mbps.toFixed(0).padStart(7)} ${(r.batches / (r.ms / 1000)).toFixed(0).padStart(11)} ${String(r.commits).padStart(8)} ${(r.batches / Math.max(1, r.commits)).toFixed(1).padStart(15)} ${r.avgLogsPerCommit.toFixed(2).padStart(12)}`,
      );
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

await main();
