// `sluice start` (main thread of the broker process): resolves the configuration, starts the
// broker, prints one ready line on stdout, and owns the process's shutdown: the first SIGTERM or
// SIGINT stops the broker gracefully (move leaderships away, stop accepting, finish in-flight
// work, flush) and exits 0; a shutdown that outlasts stopDeadlineMs, or a second signal, exits 1
// at once. SIGHUP reads the TLS certificate files, PLAIN's user file and the admin token file
// again (new connections use them; open ones keep theirs).

import { resolve } from 'node:path';
import { configEntries, joinHostPort, resolveConfig } from '../config.js';
import type { BrokerConfig } from '../config.js';
import { createLogger } from '../common/logger.js';
import type { Logger } from '../common/logger.js';
import { CONFIG_SOURCES_HELP, configFlagsHelp } from './help.js';
import type { CliIo } from './io.js';

/** What closing the listener, the quorum and the logs may take once the leaderships have moved. */
const CLOSE_DEADLINE_MS = 10_000;

/**
 * How long a stop may take before the process exits 1: the controlled shutdown's bound (its
 * last request may take one heartbeat interval more) and then the close.
 */
export function stopDeadlineMs(config: Pick<BrokerConfig, 'controlledShutdownTimeoutMs' | 'brokerHeartbeatIntervalMs'>): number {
  return config.controlledShutdownTimeoutMs + config.brokerHeartbeatIntervalMs + CLOSE_DEADLINE_MS;
}

interface StoppableBroker {
  readonly kafkaPort: number;
  readonly listenerPorts: readonly number[];
  readonly adminPort: number;
  reloadSecurity(): void;
  stop(): Promise<void>;
}

/** The line scripts wait for: key=value pairs, values JSON-quoted only if they contain spaces. */
export function readyLine(config: BrokerConfig, broker: Pick<StoppableBroker, 'kafkaPort' | 'adminPort'> & Partial<Pick<StoppableBroker, 'listenerPorts'>>): string {
  const quote = (v: string): string => (/\s/.test(v) ? JSON.stringify(v) : v);
  const flush = config.flush.kind === 'interval' ? `${config.flush.ms}ms` : config.flush.kind;
  // With --listeners, every listener as NAME://HOST:PORT (kafka= is the primary one).
  const listeners = config.listeners.length === 0 ? [] : [
    `listeners=${config.clientListeners.map((l, i) => `${l.name}://${joinHostPort(l.host, broker.listenerPorts?.[i] ?? l.port)}`).join(',')}`,
  ];
  return [
    'sluice ready',
    `kafka=${joinHostPort(config.kafkaHost, broker.kafkaPort)}`,
    ...listeners,
    `admin=${joinHostPort(config.adminHost, broker.adminPort)}`,
    `data-dir=${quote(resolve(config.dataDir))}`,
    `shards=${config.shards}`,
    `flush=${flush}`,
  ].join(' ');
}

/**
 * Signal handling that exists from before the broker starts: a signal during startup stops the
 * broker as soon as it is up.
 */
function installSignals(logger: Logger, deadlineMs: number): { attach(broker: StoppableBroker): void } {
  let broker: StoppableBroker | null = null;
  let stopping = false;
  const stop = (b: StoppableBroker): void => {
    const force = setTimeout(() => {
      logger.error({ deadlineMs }, 'shutdown did not finish in time; exiting');
      process.exit(1);
    }, deadlineMs);
    b.stop().then(
      () => {
        clearTimeout(force);
        logger.info('stopped');
        process.exit(0);
      },
      (err: unknown) => {
        logger.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  const onSignal = (signal: NodeJS.Signals): void => {
    if (stopping) {
      logger.warn({ signal }, 'second signal; exiting now');
      process.exit(1);
    }
    stopping = true;
    logger.info({ signal }, 'stopping');
    if (broker !== null) stop(broker);
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  process.on('SIGHUP', () => {
    logger.info('SIGHUP: reloading TLS certificates, PLAIN users and the admin token');
    broker?.reloadSecurity();
  });
  return {
    attach(b) {
      broker = b;
      if (stopping) stop(b);
    },
  };
}

/** Runs the broker until a signal ends the process; resolves only if startup fails (exit code). */
export async function runStart(configArgv: readonly string[], io: CliIo): Promise<number> {
  const { config, sources } = resolveConfig(configArgv, io.env);
  const logger = createLogger(config.logLevel);
  const signals = installSignals(logger, stopDeadlineMs(config));
  const settings = Object.fromEntries(
    configEntries(config, sources).filter((e) => e.source !== 'default').map((e) => [e.key, `${e.value} (${e.source})`]),
  );
  logger.info({ settings }, 'starting broker');
  let broker: StoppableBroker;
  try {
    // Loaded here so that the other commands never load the broker and its workers.
    const { startBroker } = await import('../server/broker.js');
    broker = await startBroker(config, logger);
  } catch (err) {
    logger.fatal({ err }, 'broker failed to start');
    return 1;
  }
  io.out(readyLine(config, broker));
  signals.attach(broker);
  return new Promise<number>(() => undefined);
}

export const startHelp = (): string => `Usage: sluice start [options]

Starts a broker node and prints one line when it is ready:
  sluice ready kafka=HOST:PORT [listeners=NAME://HOST:PORT,...] admin=HOST:PORT data-dir=DIR shards=N flush=POLICY
SIGTERM/SIGINT stop it gracefully: the controller first moves its partition leaderships to
other in-sync replicas (up to --controlled-shutdown-timeout-ms), then it closes (exit 0; exit 1
if the whole stop outlasts that bound plus one heartbeat interval plus 10 s, or at once on a
second signal). SIGHUP reloads the TLS certificate and key files, the PLAIN users file and the admin token file.

${CONFIG_SOURCES_HELP}

Options:
${configFlagsHelp()}`;
