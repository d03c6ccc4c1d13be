// `sluice/testing` (main thread of the embedding process): an in-process broker for other
// projects' test suites, the role a Testcontainers broker plays but without Docker or a child
// process. startBroker() resolves a configuration through the same validated path as
// `sluice start` (from its own defaults and flags only: the embedding process's SLUICE_*
// variables do not leak in), starts the broker on loopback and returns where to reach it.
// Invariants: several brokers may live in one process (each has its own ports, shard workers,
// metrics registry and logger); stop() is idempotent, closes every handle the broker opened, and
// removes the data directory only when startBroker() created it; a failed start leaves nothing
// behind either.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { joinHostPort, resolveConfig, type LogLevel } from '../config.js';
import { createLogger } from '../common/logger.js';
import { startBroker as startServer, type Broker } from '../server/broker.js';

export { ConfigError, type LogLevel } from '../config.js';

export interface TestBrokerOptions {
  /** Kafka listener port on 127.0.0.1; 0 (the default) takes a free one. */
  readonly port?: number;
  /** Admin HTTP port on 127.0.0.1; 0 (the default) takes a free one. */
  readonly adminPort?: number;
  /** Partitions of auto-created topics and of topics created without a count; default 1. */
  readonly partitions?: number;
  /** Directory for the logs and metadata, kept on stop(); default: a fresh temp directory removed on stop(). */
  readonly dataDir?: string;
  /** Level of the broker's log lines on stdout; default 'silent', so test output stays clean. */
  readonly logLevel?: LogLevel;
  /** Shard worker threads; default 1 (each one costs start time and a thread). */
  readonly shards?: number;
  /** Further `sluice start` flags, applied over the defaults here (e.g. ['--no-auto-create-topics']). */
  readonly flags?: readonly string[];
}

export interface TestBroker {
  /** The Kafka bootstrap address, HOST:PORT with the port really bound. */
  readonly bootstrap: string;
  /** Base URL of the admin HTTP API (/v1/health, /metrics, ...). */
  readonly adminUrl: string;
  readonly dataDir: string;
  /** Stops the broker and, if it made it, removes the data directory; later calls return the same promise. */
  stop(): Promise<void>;
}

const LOOPBACK = '127.0.0.1';
/** Small enough that a test writing a few MiB sees segments roll; large enough for the default message size. */
const SEGMENT_BYTES = 1 << 20;
/** Ring per shard and direction: the smallest that still carries a default-sized (1 MiB) batch. */
const RING_BYTES = 4 << 20;

/** The flags of an embedded test broker: one node, loopback, no fsync, small files, no group delay. */
function embeddedFlags(options: TestBrokerOptions, dataDir: string): string[] {
  return [
    '--data-dir', dataDir,
    '--kafka-addr', joinHostPort(LOOPBACK, options.port ?? 0),
    '--admin-addr', joinHostPort(LOOPBACK, options.adminPort ?? 0),
    '--shards', String(options.shards ?? 1),
    '--log-level', options.logLevel ?? 'silent',
    '--num-partitions', String(options.partitions ?? 1),
    '--auto-create-topics',
    '--flush', 'never',
    '--log-segment-bytes', String(SEGMENT_BYTES),
    '--ring-bytes', String(RING_BYTES),
    '--offsets-topic-partitions', '1',
    '--offsets-topic-replication-factor', '1',
    '--offsets-topic-segment-bytes', String(SEGMENT_BYTES),
    '--min-insync-replicas', '1',
    // Kafka's own advice for tests: a group's first member need not wait for others.
    '--group-initial-rebalance-delay-ms', '0',
    ...(options.flags ?? []),
  ];
}

/** Starts a broker in this process; throws ConfigError for bad options (and removes any temp dir it made). */
export async function startBroker(options: TestBrokerOptions = {}): Promise<TestBroker> {
  const ownsDir = options.dataDir === undefined;
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'sluice-test-'));
  const removeOwnDir = (): void => {
    if (ownsDir) rmSync(dataDir, { recursive: true, force: true });
  };
  let broker: Broker;
  try {
    const { config } = resolveConfig(embeddedFlags(options, dataDir), {});
    broker = await startServer(config, createLogger(config.logLevel));
  } catch (err) {
    removeOwnDir();
    throw err;
  }
  let stopping: Promise<void> | null = null;
  return {
    bootstrap: joinHostPort(LOOPBACK, broker.kafkaPort),
    adminUrl: `http://${joinHostPort(LOOPBACK, broker.adminPort)}`,
    dataDir,
    stop() {
      stopping ??= broker.stop().finally(removeOwnDir);
      return stopping;
    },
  };
}
