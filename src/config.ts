// Broker configuration: the typed BrokerConfig, its defaults, and its resolution from command-line
// flags > SLUICE_* environment variables > a JSON config file > defaults.
// Runs on the main thread at startup and in CLI commands; pure apart from reading the file.
// Invariant: a BrokerConfig returned by resolveConfig has passed every per-key and cross-key
// check, so the rest of the broker never re-validates it. Every key is validated before anything
// is reported, so one run shows all mistakes at once, each with the key and where it came from.

import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import type { FlushPolicy } from './log/group_commit.js';
import { IO_MODES, type IoMode } from './native/addon.js';
import { SASL_MECHANISMS, type SaslMechanism } from './common/sasl_mechanisms.js';


export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** What a process does in a cluster (KRaft's process.roles). */
export const NODE_ROLES = ['broker', 'controller'] as const;
export type NodeRole = (typeof NODE_ROLES)[number];

/** One member of the static controller quorum: its node id and controller listener. */
export interface ControllerVoter {
  readonly id: number;
  readonly host: string;
  readonly port: number;
}

/** Kafka's security protocols, as a listener's name maps to one (listener.security.protocol.map). */
export const SECURITY_PROTOCOLS = ['PLAINTEXT', 'SSL', 'SASL_PLAINTEXT', 'SASL_SSL'] as const;
export type SecurityProtocol = (typeof SECURITY_PROTOCOLS)[number];

/** A named listener as --listeners gives it: NAME://HOST:PORT. */
export interface ListenerAddress {
  readonly name: string;
  readonly host: string;
  readonly port: number;
}

/** A client listener with its security protocol (resolved from the map). */
export interface ClientListener extends ListenerAddress {
  readonly protocol: SecurityProtocol;
}

export const SSL_CLIENT_AUTH = ['none', 'requested', 'required'] as const;
export type SslClientAuth = (typeof SSL_CLIENT_AUTH)[number];

/** Bound on --listeners entries: each is a server socket and an endpoint in every registration. */
export const MAX_LISTENERS = 16;

/** Bound on --controller-voters entries: every voter is a connection and a Raft replica. */
export const MAX_CONTROLLER_VOTERS = 32;

/**
 * Default of --max-uncommitted-produce-bytes: the produced bytes a shard's logs hold until their
 * commit settles. A ring lane's batch leaves the ring for a slab at once, and a same-thread lane's
 * frame leaves the held-bytes bound at dispatch, so neither of those bounds holds them: without
 * this one, a disk whose fdatasyncs stall while its writes still land lets producers fill the
 * shard's memory (and, past 1 GiB, the io_uring ring's byte limit, which fails the commit). Before
 * it, each connection's in-flight bound (64 requests) was the only limit, and librdkafka's producer
 * filled it: ~61 MB held per connection, in frames too many for the frame pool to recycle, so each
 * run faulted in fresh pages. At 16 MiB (librdkafka 1M x 1 KiB, acks=1, --flush always) a run
 * faults in about a fifth of the pages (5-9k against 14-34k) and, by median, the broker takes 6 %
 * (16 pairs against the build before, a noisy hour) to 22 % (8 runs each against a 128 MiB bound,
 * which they never reached, a quiet hour) less CPU per message; the rate did not move beyond the
 * spread. Under --flush never it stopped the runs that took 2-3x the CPU. A larger bound gained
 * nothing measurable for acks=all over 4 connections under --flush always.
 */
export const DEFAULT_MAX_UNCOMMITTED_PRODUCE_BYTES = 16 << 20;

export interface BrokerConfig {
  readonly dataDir: string;
  /** Normalized HOST:PORT (IPv6 hosts in brackets); kafkaHost/kafkaPort are its parts. */
  readonly kafkaAddr: string;
  readonly kafkaHost: string;
  readonly kafkaPort: number;
  /**
   * The HOST:PORT registered with the controller and given to clients and other brokers in
   * Metadata (Kafka's advertised.listeners); '' advertises the Kafka listener itself.
   */
  readonly advertisedKafkaAddr: string;
  /**
   * Kafka's listeners: named client listeners; empty: one PLAINTEXT listener on kafkaAddr. When
   * set, kafkaAddr is derived: the primary listener's (the first PLAINTEXT one, else the first),
   * which is registered for other brokers' replica fetchers and printed in the ready line.
   */
  readonly listeners: readonly ListenerAddress[];
  /** Kafka's listener.security.protocol.map: a listener name's protocol; the four protocol names map to themselves. */
  readonly listenerSecurityProtocolMap: ReadonlyMap<string, SecurityProtocol>;
  /** Kafka's advertised.listeners: HOST:PORT per listener name; a listener not named advertises its own address. */
  readonly advertisedListeners: ReadonlyMap<string, { readonly host: string; readonly port: number }>;
  /** Every client listener, the primary first (derived from listeners, or kafkaAddr). */
  readonly clientListeners: readonly ClientListener[];
  /** PEM certificate chain and private key of SSL and SASL_SSL listeners ('' none). */
  readonly sslCertFile: string;
  readonly sslKeyFile: string;
  /** PEM CA bundle client certificates are verified against ('' none). */
  readonly sslCaFile: string;
  /** Kafka's ssl.client.auth: whether SSL listeners ask clients for a certificate (mTLS). */
  readonly sslClientAuth: SslClientAuth;
  /** Kafka's sasl.enabled.mechanisms on every SASL listener. */
  readonly saslEnabledMechanisms: readonly SaslMechanism[];
  /** PLAIN's user file: NAME:PASSWORD lines ('' none; required when PLAIN is enabled). */
  readonly saslPlainUsersFile: string;
  /**
   * Kafka's inter.broker.listener.name: the listener replica fetchers reach other brokers on ('':
   * the primary one). A SASL_PLAINTEXT one makes them authenticate as interBrokerSaslUsername.
   */
  readonly interBrokerListener: string;
  /** Kafka's sasl.mechanism.inter.broker.protocol. */
  readonly interBrokerSaslMechanism: SaslMechanism;
  readonly interBrokerSaslUsername: string;
  /** Holds the inter-broker user's password (its first line); read at start. */
  readonly interBrokerSaslPasswordFile: string;
  /**
   * The controller listener's protocol (Kafka's listener.security.protocol.map entry for
   * controller.listener.names): brokers and voters reach it with the inter-broker credentials and
   * the ssl-* files, and it admits only those (or mTLS certificates) holding CLUSTER_ACTION.
   */
  readonly controllerSecurityProtocol: SecurityProtocol;
  /** Kafka's connections.max.reauth.ms (KIP-368): a SASL session's lifetime; 0: no limit. */
  readonly connectionsMaxReauthMs: number;
  /** Kafka's super.users: principals (User:NAME) every ACL check allows. */
  readonly superUsers: readonly string[];
  /**
   * Kafka's allow.everyone.if.no.acl.found: a resource no ACL names is open to all. Unset (null)
   * it resolves to true exactly when every client listener is PLAINTEXT (nobody authenticates).
   */
  readonly allowEveryoneIfNoAclFound: boolean | null;
  readonly adminAddr: string;
  readonly adminHost: string;
  readonly adminPort: number;
  /** PEM certificate and key of the admin HTTP ('' none: plain HTTP); reloaded on SIGHUP. */
  readonly adminSslCertFile: string;
  readonly adminSslKeyFile: string;
  /** A file holding the admin HTTP's bearer token ('' none: no token asked); reloaded on SIGHUP. */
  readonly adminTokenFile: string;
  readonly nodeId: number;
  /**
   * The static controller quorum (KRaft's controller.quorum.voters); empty: this node alone is a
   * one-voter quorum, with no controller listener unless --controller-addr names one.
   */
  readonly controllerVoters: readonly ControllerVoter[];
  /** Never empty once resolved: unset means broker+controller for a voter, broker otherwise. */
  readonly roles: readonly NodeRole[];
  /**
   * This node's controller listener HOST:PORT: its entry in controllerVoters unless set; '' for a
   * node without the controller role, and for a single node unless set (it has no peer to reach it).
   */
  readonly controllerAddr: string;
  readonly controllerHost: string;
  readonly controllerPort: number;
  readonly rack: string | null;
  readonly metadataSnapshotRecords: number;
  readonly metadataSnapshotBytes: number;
  readonly brokerHeartbeatIntervalMs: number;
  readonly brokerSessionTimeoutMs: number;
  /** How long a stopping broker waits for the controller to move its leaderships away; 0: it asks once and does not wait. */
  readonly controlledShutdownTimeoutMs: number;
  /** Bytes of its replicas' log tails a broker joining a cluster reads before it takes leaderships (0: none). */
  readonly warmUpBytes: number;
  readonly leaderImbalanceCheckIntervalMs: number;
  readonly leaderImbalancePerBrokerPercentage: number;
  readonly shards: number;
  readonly flush: FlushPolicy;
  /** Storage I/O backend of the shards; 'native' fails startup when the io_uring addon is unavailable. */
  readonly io: IoMode;
  /** Which thread serves client connections: the shards main hands them to (the default), or main. */
  readonly connectionPlacement: ConnectionPlacementMode;
  readonly maxRequestBytes: number;
  /** Bound on request bytes read and not yet dispatched (frames take their room from their length); a connection waits for room. */
  readonly maxPartialRequestBytes: number;
  /** Per shard: produced bytes held until their group commit settles; past it produces wait for commits to settle. */
  readonly maxUncommittedProduceBytes: number;
  readonly maxConnections: number;
  /** Kafka's max.connections.per.ip: client connections from one address (other brokers' replica fetchers do not count). */
  readonly maxConnectionsPerIp: number;
  /** Kafka's max.connections.per.ip.overrides: a cap per address, instead of maxConnectionsPerIp. */
  readonly maxConnectionsPerIpOverrides: ReadonlyMap<string, number>;
  /** Kafka's max.connection.creation.rate (per second), applied to the listener and to each address. */
  readonly maxConnectionCreationRate: number;
  readonly idleTimeoutMs: number;
  readonly maxInflightRequestsPerConnection: number;
  /** Requests served slower than this are logged at warn (a long-poll fetch's wait for data not counted). */
  readonly slowRequestMs: number;
  /** Per connection: response bytes queued to send plus reserved by in-flight fetches. */
  readonly maxQueuedResponseBytes: number;
  /** Kafka's fetch.max.bytes: the most one Fetch response carries, whatever the client asks. */
  readonly fetchMaxBytes: number;
  readonly autoCreateTopics: boolean;
  readonly numPartitions: number;
  readonly defaultReplicationFactor: number;
  readonly minInsyncReplicas: number;
  readonly replicaLagTimeMaxMs: number;
  readonly replicaFetchWaitMaxMs: number;
  readonly messageMaxBytes: number;
  readonly logSegmentBytes: number;
  readonly logSegmentMs: number;
  /** -1 = unlimited. */
  readonly logRetentionMs: number;
  /** -1 = unlimited. */
  readonly logRetentionBytes: number;
  /** How often each shard applies time and size retention (Kafka's log.retention.check.interval.ms). */
  readonly logRetentionCheckIntervalMs: number;
  readonly logIndexIntervalBytes: number;
  readonly producerIdExpirationMs: number;
  readonly ringBytes: number;
  readonly logLevel: LogLevel;
  /** Partitions of `__consumer_offsets`; fixed once the topic exists. */
  readonly offsetsTopicPartitions: number;
  readonly offsetsTopicReplicationFactor: number;
  /** Segment size of `__consumer_offsets` partitions, fixed once created; bounds its log to about two segments plus the live state. */
  readonly offsetsTopicSegmentBytes: number;
  readonly groupInitialRebalanceDelayMs: number;
  readonly groupMinSessionTimeoutMs: number;
  readonly groupMaxSessionTimeoutMs: number;
  readonly groupMaxSize: number;
  /** KIP-848 members heartbeat this often; it bounds how soon a moved partition reaches its new owner. */
  readonly groupConsumerHeartbeatIntervalMs: number;
  readonly groupConsumerSessionTimeoutMs: number;
  readonly offsetsRetentionMs: number;
}

export type ConfigSource = 'flag' | 'env' | 'file' | 'default';
export type ConfigSources = Record<keyof BrokerConfig, ConfigSource>;

export interface ConfigIssue {
  /** Flag name without dashes, e.g. 'kafka-addr' (or 'config' for the file itself). */
  readonly key: string;
  readonly source: ConfigSource;
  /** Where exactly the value came from: '--kafka-addr', 'SLUICE_KAFKA_ADDR', 'file ./x.json'. */
  readonly origin: string;
  readonly message: string;
}

export class ConfigError extends Error {
  readonly issues: readonly ConfigIssue[];
  constructor(issues: readonly ConfigIssue[]) {
    super(
      'invalid configuration:\n' +
        issues.map((i) => `  ${i.key} (from ${i.origin}): ${i.message}`).join('\n'),
    );
    this.name = 'ConfigError';
    this.issues = issues;
  }
}

// ---- option table ----------------------------------------------------------------------------

type DerivedKey = 'clientListeners' | 'kafkaHost' | 'kafkaPort' | 'adminHost' | 'adminPort' | 'controllerHost' | 'controllerPort';
type OptionKey = Exclude<keyof BrokerConfig, DerivedKey>;
type Printable = string | number | boolean;

interface Option<T> {
  readonly help: string;
  /** Placeholder for the value in help text, e.g. 'HOST:PORT'. */
  readonly hint: string;
  readonly boolean?: true;
  /** A function so that machine-dependent defaults (CPU count) are read at resolution time. */
  readonly default: () => T;
  /** Throws InvalidValue with a message that completes "KEY: ...". */
  parse(raw: string): T;
  format?(value: T): Printable;
}

class InvalidValue extends Error {}

const INT32_MAX = 2 ** 31 - 1;
/** setTimeout clamps larger delays to 1 ms, so anything used as a timer must stay below it. */
const MAX_TIMER_MS = INT32_MAX;

function parseInteger(raw: string): number {
  const n = /^-?\d+$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isSafeInteger(n)) throw new InvalidValue(`"${raw}" is not an integer`);
  return n;
}

function int(help: string, def: number | (() => number), min: number, max: number): Option<number> {
  return {
    help,
    hint: 'N',
    default: typeof def === 'number' ? () => def : def,
    parse(raw) {
      const n = parseInteger(raw);
      if (n < min || n > max) throw new InvalidValue(`${n} is out of range [${min}, ${max}]`);
      return n;
    },
  };
}

/** -1 means unlimited; otherwise a positive integer. */
function limit(help: string, def: number): Option<number> {
  return {
    help,
    hint: 'N',
    default: () => def,
    parse(raw) {
      const n = parseInteger(raw);
      if (n !== -1 && n < 1) throw new InvalidValue(`${n} must be -1 (unlimited) or positive`);
      return n;
    },
  };
}

function text(help: string, hint: string, def: string): Option<string> {
  return {
    help,
    hint,
    default: () => def,
    parse(raw) {
      if (raw.trim() === '') throw new InvalidValue('must not be empty');
      return raw;
    },
  };
}

function address(help: string, def: string): Option<string> {
  return {
    help,
    hint: 'HOST:PORT',
    default: () => def,
    parse(raw) {
      const { host, port } = splitHostPort(raw);
      return joinHostPort(host, port);
    },
  };
}

const bool = (help: string, def: boolean): Option<boolean> => ({
  help,
  hint: 'true|false',
  boolean: true,
  default: () => def,
  parse(raw) {
    if (raw === 'true') return true;
    if (raw === 'false') return false;
    throw new InvalidValue(`"${raw}" must be true or false`);
  },
});

const flush: Option<FlushPolicy> = {
  help: 'fsync policy: always (before acknowledging), <ms> (interval), never (rely on replicas)',
  hint: 'always|<ms>|never',
  default: () => ({ kind: 'always' }),
  parse(raw) {
    if (raw === 'always' || raw === 'never') return { kind: raw };
    const ms = /^\d+$/.test(raw) ? Number(raw) : NaN;
    if (Number.isSafeInteger(ms) && ms >= 1 && ms <= MAX_TIMER_MS) return { kind: 'interval', ms };
    throw new InvalidValue(`"${raw}" must be always, never, or an interval in ms (1-${MAX_TIMER_MS})`);
  },
  format: (f) => (f.kind === 'interval' ? String(f.ms) : f.kind),
};

const io: Option<IoMode> = {
  help: 'storage I/O backend: native (io_uring addon; startup fails without it), node (libuv thread pool), auto (native when available)',
  hint: 'native|node|auto',
  default: () => 'auto',
  parse(raw) {
    const mode = IO_MODES.find((m) => m === raw);
    if (mode === undefined) throw new InvalidValue(`"${raw}" must be one of ${IO_MODES.join(', ')}`);
    return mode;
  },
};

export type ConnectionPlacementMode = 'main' | 'shards';
const CONNECTION_PLACEMENTS: readonly ConnectionPlacementMode[] = ['shards', 'main'];

const connectionPlacement: Option<ConnectionPlacementMode> = {
  help: 'which thread serves client connections: shards (main accepts each connection on a plaintext listener without SASL and hands it to a shard, which serves Produce, Fetch (consumers\' and followers\'), ListOffsets and OffsetForLeaderEpoch on partitions this broker leads itself, reaching partitions of other shards over a ring pair between every two shards, and forwards every other request to main, each shard sending through its own native sender; TLS and SASL listeners, --io node and a missing addon stay on main), or main (every connection on the main thread)',
  hint: 'shards|main',
  default: () => 'shards',
  parse(raw) {
    const mode = CONNECTION_PLACEMENTS.find((m) => m === raw);
    if (mode === undefined) throw new InvalidValue(`"${raw}" must be one of ${CONNECTION_PLACEMENTS.join(', ')}`);
    return mode;
  },
};

const logLevel: Option<LogLevel> = {
  help: `log level: ${LOG_LEVELS.join(', ')}`,
  hint: 'LEVEL',
  default: () => 'info',
  parse(raw) {
    const level = LOG_LEVELS.find((l) => l === raw);
    if (level === undefined) throw new InvalidValue(`"${raw}" must be one of ${LOG_LEVELS.join(', ')}`);
    return level;
  },
};

/** `id@host:port,...` (KRaft's controller.quorum.voters); ids distinct. */
const controllerVoters: Option<readonly ControllerVoter[]> = {
  help: 'the controller quorum, ID@HOST:PORT of each voter\'s controller listener (Kafka\'s controller.quorum.voters); unset: a one-voter quorum of this node',
  hint: 'ID@HOST:PORT,...',
  default: () => [],
  parse(raw) {
    if (raw.trim() === '') return [];
    const entries = raw.split(',');
    if (entries.length > MAX_CONTROLLER_VOTERS) throw new InvalidValue(`at most ${MAX_CONTROLLER_VOTERS} voters, got ${entries.length}`);
    const voters: ControllerVoter[] = [];
    for (const entry of entries) {
      const m = /^(\d+)@(.+)$/.exec(entry.trim());
      if (m === null) throw new InvalidValue(`"${entry}" must be ID@HOST:PORT`);
      const id = parseInteger(m[1] ?? '');
      if (id > INT32_MAX) throw new InvalidValue(`voter id ${id} is out of range [0, ${INT32_MAX}]`);
      if (voters.some((v) => v.id === id)) throw new InvalidValue(`voter id ${id} appears twice`);
      const { host, port } = splitHostPort(m[2] ?? '');
      if (port === 0) throw new InvalidValue(`voter ${id} needs a fixed port, not 0`);
      voters.push({ id, host, port });
    }
    return voters;
  },
  format: (voters) => voters.map((v) => `${v.id}@${joinHostPort(v.host, v.port)}`).join(','),
};

/** Entries of max.connections.per.ip.overrides: each is one more map entry, so a bounded number. */
const MAX_PER_IP_OVERRIDES = 1000;

/** Kafka's spelling of max.connections.per.ip.overrides: `ADDRESS:N,...`. */
export function formatPerIpOverrides(overrides: ReadonlyMap<string, number>): string {
  return [...overrides].map(([addr, n]) => `${addr}:${n}`).join(',');
}

/** `ADDRESS:N,...` (Kafka's max.connections.per.ip.overrides); an IPv6 address keeps its colons (the count follows the last). */
const perIpOverrides: Option<ReadonlyMap<string, number>> = {
  help: 'client connections allowed from particular addresses, overriding max-connections-per-ip (Kafka\'s max.connections.per.ip.overrides)',
  hint: 'ADDRESS:N,...',
  default: () => new Map(),
  parse(raw) {
    const out = new Map<string, number>();
    if (raw.trim() === '') return out;
    const entries = raw.split(',');
    if (entries.length > MAX_PER_IP_OVERRIDES) throw new InvalidValue(`at most ${MAX_PER_IP_OVERRIDES} entries, got ${entries.length}`);
    for (const entry of entries) {
      const at = entry.lastIndexOf(':');
      const addr = entry.slice(0, at).trim();
      if (at <= 0 || addr === '') throw new InvalidValue(`"${entry}" must be ADDRESS:N`);
      const n = parseInteger(entry.slice(at + 1).trim());
      if (n < 0 || n > INT32_MAX) throw new InvalidValue(`${n} is out of range [0, ${INT32_MAX}] for ${addr}`);
      if (out.has(addr)) throw new InvalidValue(`${addr} appears twice`);
      out.set(addr, n);
    }
    return out;
  },
  format: formatPerIpOverrides,
};

/** Empty (or '') until derived: the default depends on whether this node is a voter. */
const roles: Option<readonly NodeRole[]> = {
  help: 'broker, controller or broker,controller (Kafka\'s process.roles); default: both for a voter, broker otherwise',
  hint: 'ROLES',
  default: () => [],
  parse(raw) {
    const out: NodeRole[] = [];
    if (raw.trim() === '') return out;
    for (const name of raw.split(',')) {
      const role = NODE_ROLES.find((r) => r === name.trim());
      if (role === undefined) throw new InvalidValue(`"${name}" must be one of ${NODE_ROLES.join(', ')}`);
      if (!out.includes(role)) out.push(role);
    }
    return out;
  },
  format: (r) => r.join(','),
};

/** '' (unset) until derived from the voters list. */
const controllerAddr: Option<string> = {
  ...address('this node\'s controller listener HOST:PORT to bind (default: its entry in controller-voters; none on a single node)', ''),
  parse: (raw) => (raw.trim() === '' ? '' : address('', '').parse(raw)),
};

/** Hosts that only a listener can bind: advertised, they would send a peer to itself or nowhere. */
const UNROUTABLE_HOSTS = ['0.0.0.0', '::'];

/** '' (unset) until derived at startup from the Kafka listener's bound port. */
const advertisedKafkaAddr: Option<string> = {
  help: 'HOST:PORT registered with the controller and returned in Metadata, where clients and other brokers connect (Kafka\'s advertised.listeners; e.g. a proxy or NAT address); unset: the Kafka listener\'s own address',
  hint: 'HOST:PORT',
  default: () => '',
  parse(raw) {
    if (raw.trim() === '') return '';
    const { host, port } = splitHostPort(raw.trim());
    if (port === 0) throw new InvalidValue('port must be in [1, 65535]: peers cannot connect to port 0');
    if (UNROUTABLE_HOSTS.includes(host)) throw new InvalidValue(`host ${host} is a wildcard for binding, not an address peers can connect to`);
    return joinHostPort(host, port);
  },
};

/** A listener name: a letter, then letters, digits and '_' (kept upper case, as Kafka compares them). */
function listenerName(raw: string): string {
  const name = raw.trim().toUpperCase();
  if (!/^[A-Z][A-Z0-9_]{0,63}$/.test(name)) throw new InvalidValue(`"${raw}" is not a listener name (a letter, then letters, digits or _)`);
  return name;
}

/** `NAME://HOST:PORT,...` (Kafka's listeners and advertised.listeners). */
function parseListenerList(raw: string, allowPortZero: boolean): ListenerAddress[] {
  if (raw.trim() === '') return [];
  const entries = raw.split(',');
  if (entries.length > MAX_LISTENERS) throw new InvalidValue(`at most ${MAX_LISTENERS} listeners, got ${entries.length}`);
  const out: ListenerAddress[] = [];
  for (const entry of entries) {
    const m = /^([^:/]+):\/\/(.+)$/.exec(entry.trim());
    if (m === null) throw new InvalidValue(`"${entry}" must be NAME://HOST:PORT`);
    const name = listenerName(m[1]!);
    if (out.some((l) => l.name === name)) throw new InvalidValue(`listener ${name} appears twice`);
    const { host, port } = splitHostPort(m[2]!);
    if (!allowPortZero && port === 0) throw new InvalidValue(`${name}: clients cannot connect to port 0`);
    out.push({ name, host, port });
  }
  return out;
}

const formatListeners = (ls: readonly ListenerAddress[]): string => ls.map((l) => `${l.name}://${joinHostPort(l.host, l.port)}`).join(',');

const listeners: Option<readonly ListenerAddress[]> = {
  help: 'named client listeners, NAME://HOST:PORT each (Kafka\'s listeners), e.g. SASL_SSL://0.0.0.0:9093,PLAINTEXT://127.0.0.1:9092; replaces kafka-addr; unset: one PLAINTEXT listener on kafka-addr',
  hint: 'NAME://HOST:PORT,...',
  default: () => [],
  parse: (raw) => parseListenerList(raw, true),
  format: formatListeners,
};

const listenerSecurityProtocolMap: Option<ReadonlyMap<string, SecurityProtocol>> = {
  help: `each listener name's security protocol, NAME:PROTOCOL (Kafka's listener.security.protocol.map); ${SECURITY_PROTOCOLS.join(', ')} map to themselves`,
  hint: 'NAME:PROTOCOL,...',
  default: () => new Map(),
  parse(raw) {
    const out = new Map<string, SecurityProtocol>();
    if (raw.trim() === '') return out;
    const entries = raw.split(',');
    if (entries.length > MAX_LISTENERS) throw new InvalidValue(`at most ${MAX_LISTENERS} entries, got ${entries.length}`);
    for (const entry of entries) {
      const [name, protocol, ...rest] = entry.split(':');
      const p = SECURITY_PROTOCOLS.find((x) => x === protocol?.trim().toUpperCase());
      if (name === undefined || p === undefined || rest.length > 0) throw new InvalidValue(`"${entry}" must be NAME:PROTOCOL with PROTOCOL one of ${SECURITY_PROTOCOLS.join(', ')}`);
      out.set(listenerName(name), p);
    }
    return out;
  },
  format: (m) => [...m].map(([n, p]) => `${n}:${p}`).join(','),
};

const advertisedListeners: Option<ReadonlyMap<string, { readonly host: string; readonly port: number }>> = {
  help: 'where clients reach each listener, NAME://HOST:PORT (Kafka\'s advertised.listeners); a listener not named advertises its own address (the primary one: advertised-kafka-addr if set)',
  hint: 'NAME://HOST:PORT,...',
  default: () => new Map(),
  parse(raw) {
    const out = new Map<string, { host: string; port: number }>();
    for (const l of parseListenerList(raw, false)) {
      if (UNROUTABLE_HOSTS.includes(l.host)) throw new InvalidValue(`${l.name}: host ${l.host} is a wildcard for binding, not an address clients can connect to`);
      out.set(l.name, { host: l.host, port: l.port });
    }
    return out;
  },
  format: (m) => formatListeners([...m].map(([name, a]) => ({ name, ...a }))),
};

/** A value that may be left unset (''). */
const optionalText = (help: string, hint: string): Option<string> => ({ help, hint, default: () => '', parse: (raw) => raw.trim() });

/** A file path; '' (unset) is allowed. */
const optionalPath = (help: string): Option<string> => optionalText(help, 'FILE');

const sslClientAuth: Option<SslClientAuth> = {
  help: 'whether SSL listeners ask clients for a certificate, verified against ssl-ca-file; the principal is its subject (Kafka\'s ssl.client.auth)',
  hint: SSL_CLIENT_AUTH.join('|'),
  default: () => 'none',
  parse(raw) {
    const v = SSL_CLIENT_AUTH.find((x) => x === raw.trim());
    if (v === undefined) throw new InvalidValue(`"${raw}" must be one of ${SSL_CLIENT_AUTH.join(', ')}`);
    return v;
  },
};

const superUsers: Option<readonly string[]> = {
  help: 'principals allowed everything whatever the ACLs say (Kafka\'s super.users), separated by ;',
  hint: 'User:NAME;...',
  default: () => [],
  parse(raw) {
    const out = raw.split(';').map((p) => p.trim()).filter((p) => p !== '');
    for (const p of out) if (!/^[^:]+:.+$/.test(p)) throw new InvalidValue(`"${p}" must be TYPE:NAME, e.g. User:admin`);
    return out;
  },
  format: (v) => v.join(';'),
};

const allowEveryoneIfNoAclFound: Option<boolean | null> = {
  help: 'a resource no ACL names is open to every principal (Kafka\'s allow.everyone.if.no.acl.found); auto: true only when every listener is PLAINTEXT',
  hint: 'true|false|auto',
  default: () => null,
  parse: (raw) => (raw === 'auto' ? null : bool('', false).parse(raw)),
  format: (v) => (v === null ? 'auto' : v),
};

const saslEnabledMechanisms: Option<readonly SaslMechanism[]> = {
  help: `SASL mechanisms SASL listeners offer (Kafka\'s sasl.enabled.mechanisms): ${SASL_MECHANISMS.join(', ')}`,
  hint: 'MECH,...',
  default: () => ['SCRAM-SHA-256', 'SCRAM-SHA-512'],
  parse(raw) {
    const out: SaslMechanism[] = [];
    for (const name of raw.split(',')) {
      const m = SASL_MECHANISMS.find((x) => x === name.trim().toUpperCase());
      if (m === undefined) throw new InvalidValue(`"${name}" must be one of ${SASL_MECHANISMS.join(', ')}`);
      if (!out.includes(m)) out.push(m);
    }
    return out;
  },
  format: (ms) => ms.join(','),
};

/** One of `choices`, named case-insensitively. */
function oneOf<T extends string>(help: string, choices: readonly T[], def: T): Option<T> {
  return {
    help: `${help}: ${choices.join(', ')}`,
    hint: choices.join('|'),
    default: () => def,
    parse(raw) {
      const v = choices.find((x) => x === raw.trim().toUpperCase());
      if (v === undefined) throw new InvalidValue(`"${raw}" must be one of ${choices.join(', ')}`);
      return v;
    },
  };
}

const rack: Option<string | null> = {
  help: 'rack of this broker, for rack-aware replica placement (Kafka\'s broker.rack)',
  hint: 'RACK',
  default: () => null,
  parse(raw) {
    if (raw.trim() === '') return null;
    if (raw.length > 255) throw new InvalidValue('must be at most 255 characters');
    return raw;
  },
  format: (r) => r ?? '',
};

const OPTIONS: { readonly [K in OptionKey]: Option<BrokerConfig[K]> } = {
  dataDir: text('directory holding partition logs and checkpoints', 'DIR', './sluice-data'),
  kafkaAddr: address('Kafka protocol listener HOST:PORT (port 0 = any free port)', '127.0.0.1:9092'),
  advertisedKafkaAddr,
  listeners,
  listenerSecurityProtocolMap,
  advertisedListeners,
  sslCertFile: optionalPath('PEM certificate (chain) of SSL and SASL_SSL listeners; reloaded on SIGHUP'),
  sslKeyFile: optionalPath('PEM private key of SSL and SASL_SSL listeners; reloaded on SIGHUP'),
  sslCaFile: optionalPath('PEM CA certificates client certificates (with ssl-client-auth) and other nodes\' TLS listeners are verified against'),
  sslClientAuth,
  saslEnabledMechanisms,
  saslPlainUsersFile: optionalPath('PLAIN\'s users: one NAME:PASSWORD per line (# comments); reloaded on SIGHUP; required with PLAIN enabled'),
  interBrokerListener: optionalText('the listener other brokers\' replica fetchers connect to, by name (Kafka\'s inter.broker.listener.name); TLS ones are verified against ssl-ca-file; unset: the primary listener', 'NAME'),
  interBrokerSaslMechanism: oneOf('SASL mechanism replica fetchers and controller peers authenticate with (Kafka\'s sasl.mechanism.inter.broker.protocol)', SASL_MECHANISMS, 'SCRAM-SHA-512'),
  interBrokerSaslUsername: optionalText('the user replica fetchers authenticate as on a SASL inter-broker listener', 'USER'),
  interBrokerSaslPasswordFile: optionalPath('file whose first line is the inter-broker user\'s password; read at start'),
  controllerSecurityProtocol: oneOf('the controller listener\'s protocol; SASL ones authenticate brokers and voters as the inter-broker user, TLS ones verify them against ssl-ca-file', SECURITY_PROTOCOLS, 'PLAINTEXT'),
  connectionsMaxReauthMs: int('a SASL session\'s lifetime: a client must re-authenticate (KIP-368) within it or its connection is closed on its next request (ms, 0 = no limit; Kafka\'s connections.max.reauth.ms)', 0, 0, MAX_TIMER_MS),
  superUsers,
  allowEveryoneIfNoAclFound,
  adminAddr: address('admin HTTP listener HOST:PORT (port 0 = any free port)', '127.0.0.1:9644'),
  adminSslCertFile: optionalPath('PEM certificate (chain) of the admin HTTP, which then speaks HTTPS; reloaded on SIGHUP'),
  adminSslKeyFile: optionalPath('PEM private key of the admin HTTP; reloaded on SIGHUP'),
  adminTokenFile: optionalPath('file holding a bearer token every admin HTTP request must carry (Authorization: Bearer TOKEN), except a bare /v1/health status; reloaded on SIGHUP'),
  nodeId: int('this broker\'s node id', 0, 0, INT32_MAX),
  controllerVoters,
  roles,
  controllerAddr,
  rack,
  metadataSnapshotRecords: int('records applied between metadata snapshots (Kafka counts bytes: metadata.log.max.record.bytes.between.snapshots)', 10000, 1, INT32_MAX),
  metadataSnapshotBytes: int('record bytes applied between metadata snapshots (Kafka\'s metadata.log.max.record.bytes.between.snapshots)', 20971520, 1024, Number.MAX_SAFE_INTEGER),
  // Shorter than Kafka's 2 s / 9 s: a silent (paused, cut off) leader's partitions move after
  // about 3 s. A killed broker is fenced sooner still: 0.5 s after its connection to the controller closed.
  brokerHeartbeatIntervalMs: int('how often a broker heartbeats to the active controller (ms; Kafka\'s broker.heartbeat.interval.ms)', 500, 10, MAX_TIMER_MS),
  brokerSessionTimeoutMs: int('a broker without a heartbeat this long is fenced (ms; Kafka\'s broker.session.timeout.ms)', 3000, 20, MAX_TIMER_MS),
  controlledShutdownTimeoutMs: int('how long a stopping broker waits for the controller to move its partition leaderships away before it closes (ms, 0 = ask once, do not wait; Kafka retries controlled.shutdown.max.retries times)', 5000, 0, 60000),
  warmUpBytes: int('bytes of its replicas\' newest log data a broker joining a cluster with topics reads into the page cache, once its replicas are in sync, before it may lead (0 = no read warm-up)', 67108864, 0, Number.MAX_SAFE_INTEGER),
  leaderImbalanceCheckIntervalMs: int('how often the active controller moves partition leaders back to their preferred replicas (ms, 0 = never; Kafka\'s leader.imbalance.check.interval.seconds)', 300000, 0, MAX_TIMER_MS),
  leaderImbalancePerBrokerPercentage: int('share of a broker\'s preferred partitions led elsewhere above which the check moves them back (%; Kafka\'s leader.imbalance.per.broker.percentage)', 10, 0, 100),
  // One per CPU but one: the main thread, V8's helpers and the I/O threads need a share too. With
  // one per CPU (two shards and main on two cores) a small-request load (20k msg/s, linger 0, one
  // partition) read run-queue waits of 2-3.4 ms at p99 against 0.15-0.3 ms of the shards' own
  // delay; one shard served it at 28 % less broker CPU per message with a lower e2e p99 (README).
  shards: int('number of shard worker threads (default: one per CPU less one, at least one)', () => Math.max(1, availableParallelism() - 1), 1, 256),
  flush,
  io,
  connectionPlacement,
  maxRequestBytes: int('largest accepted request frame in bytes', 104857600, 1, INT32_MAX),
  maxPartialRequestBytes: int(
    'bound on request bytes read and not yet dispatched, across all connections (each shard takes its share); a connection whose next request does not fit stops reading until it does (Kafka\'s queued.max.request.bytes)',
    268435456, 1, Number.MAX_SAFE_INTEGER,
  ),
  // At most half the io_uring ring's 1 GiB byte limit (native_io.ts): a commit may hold what the
  // bound allows plus the requests under way when it is reached.
  maxUncommittedProduceBytes: int(
    'per shard: bytes of produced batches held until their group commit settles (written and, per --flush, synced); past it the shard takes no more produce requests until commits settle, so a disk that falls behind holds producers back instead of filling memory',
    DEFAULT_MAX_UNCOMMITTED_PRODUCE_BYTES, 65536, 536870912,
  ),
  maxConnections: int('maximum concurrent client connections', 10000, 1, 10_000_000),
  // Kafka's default (Int.MAX): max-connections already bounds memory, and as every local client
  // shares 127.0.0.1 a lower default would only be a second, smaller global cap.
  maxConnectionsPerIp: int('client connections allowed from one address, counted from their first request; other brokers\' replica fetchers do not count (Kafka\'s max.connections.per.ip)', INT32_MAX, 1, INT32_MAX),
  maxConnectionsPerIpOverrides: perIpOverrides,
  maxConnectionCreationRate: int('new client connections per second, for the listener and for each address; later ones wait for their slot, up to 1 s, then are refused (Kafka\'s max.connection.creation.rate)', INT32_MAX, 1, INT32_MAX),
  idleTimeoutMs: int('close client connections idle this long (ms)', 600000, 1, MAX_TIMER_MS),
  maxInflightRequestsPerConnection: int(
    'requests read from one connection before its answers are sent', 64, 1, 65536,
  ),
  slowRequestMs: int('log a request at warn when serving it took longer than this (ms; a long-poll Fetch\'s wait for data does not count)', 1000, 1, MAX_TIMER_MS),
  maxQueuedResponseBytes: int(
    'bytes of responses one connection may have queued or in preparation; past it the broker stops reading from that client until it reads',
    134217728, 65536, Number.MAX_SAFE_INTEGER,
  ),
  fetchMaxBytes: int('largest Fetch response (bytes; Kafka\'s fetch.max.bytes): a larger max_bytes is reduced to it', 57671680, 1024, INT32_MAX),
  autoCreateTopics: bool('create unknown topics on metadata/produce requests', true),
  numPartitions: int('default partition count of new topics', 1, 1, INT32_MAX),
  defaultReplicationFactor: int('default replication factor of new topics', 1, 1, 32767),
  replicaLagTimeMaxMs: int('a follower not caught up for this long leaves the ISR (ms; Kafka\'s replica.lag.time.max.ms)', 10000, 100, MAX_TIMER_MS),
  replicaFetchWaitMaxMs: int('how long a follower\'s fetch waits at the leader for new records (ms; replica.fetch.wait.max.ms)', 500, 1, 60000),
  minInsyncReplicas: int('in-sync replicas an acks=all produce needs, at most the replication factor (topic min.insync.replicas default)', 2, 1, 32767),
  messageMaxBytes: int('largest record batch accepted (bytes)', 1048588, 1, INT32_MAX),
  logSegmentBytes: int('segment size at which the log rolls (bytes)', 1073741824, 1024, INT32_MAX),
  logSegmentMs: int('segment age at which the log rolls (ms)', 604800000, 1, Number.MAX_SAFE_INTEGER),
  logRetentionMs: limit('delete segments older than this (ms, -1 = keep)', 604800000),
  logRetentionBytes: limit('delete old segments beyond this partition size (bytes, -1 = keep)', -1),
  logRetentionCheckIntervalMs: int('how often retention deletes expired segments (ms)', 300000, 1, MAX_TIMER_MS),
  logIndexIntervalBytes: int('bytes between sparse offset index entries', 4096, 0, INT32_MAX),
  producerIdExpirationMs: int('forget idle producer ids after (ms)', 86400000, 1, MAX_TIMER_MS),
  ringBytes: int('capacity of each shard ring, per direction (bytes)', 33554432, 65536, 2 ** 30),
  logLevel,
  offsetsTopicReplicationFactor: int('replicas of each __consumer_offsets partition (at most the brokers live when it is created; fixed once created)', 3, 1, 32767),
  offsetsTopicPartitions: int('partitions of the internal __consumer_offsets topic (fixed once created)', 16, 1, 1000),
  offsetsTopicSegmentBytes: int('segment size of __consumer_offsets partitions (bytes, fixed once created)', 104857600, 4096, INT32_MAX),
  groupInitialRebalanceDelayMs: int('wait this long for more members before an empty group\'s first rebalance (ms)', 3000, 0, 300000),
  groupMinSessionTimeoutMs: int('smallest session timeout a group member may ask for (ms)', 6000, 1, MAX_TIMER_MS),
  groupMaxSessionTimeoutMs: int('largest session timeout a group member may ask for (ms)', 1800000, 1, MAX_TIMER_MS),
  groupMaxSize: int('members per consumer group', 1000, 1, 100000),
  groupConsumerHeartbeatIntervalMs: int('heartbeat interval of KIP-848 group members (ms); a moved partition waits up to this for its new owner', 1500, 100, 60000),
  groupConsumerSessionTimeoutMs: int('session timeout of KIP-848 group members (ms): a member silent this long is removed', 45000, 1000, 3600000),
  offsetsRetentionMs: int('keep committed offsets of an empty group this long after the last commit (ms)', 604800000, 1, Number.MAX_SAFE_INTEGER),
};

const OPTION_KEYS = Object.keys(OPTIONS) as OptionKey[];

const flagName = (key: string): string => key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
const envName = (key: string): string => `SLUICE_${flagName(key).replace(/-/g, '_').toUpperCase()}`;

const KEY_BY_FLAG: ReadonlyMap<string, OptionKey> = new Map(OPTION_KEYS.map((k) => [flagName(k), k]));

/** The flag naming the config file; also settable as SLUICE_CONFIG. */
export const CONFIG_FILE_FLAG = 'config';

export interface ConfigFlagInfo {
  readonly flag: string;
  readonly env: string;
  readonly boolean: boolean;
  readonly help: string;
  readonly hint: string;
  readonly defaultValue: Printable;
}

/** Every config flag, in a stable order, for help text and command-line splitting. */
export const CONFIG_FLAGS: readonly ConfigFlagInfo[] = OPTION_KEYS.map((key) => ({
  flag: flagName(key),
  env: envName(key),
  boolean: OPTIONS[key].boolean === true,
  help: OPTIONS[key].help,
  hint: OPTIONS[key].hint,
  defaultValue: printable(key, OPTIONS[key].default()),
}));

function printable<K extends OptionKey>(key: K, value: BrokerConfig[K]): Printable {
  const format = OPTIONS[key].format;
  if (format !== undefined) return format(value);
  return value as Printable;
}

// ---- addresses -------------------------------------------------------------------------------

/** Parses HOST:PORT ([v6addr]:PORT); throws an Error saying what is wrong. */
export function splitHostPort(raw: string): { host: string; port: number } {
  const m = /^(?:\[([0-9A-Fa-f:.]+)\]|([^:\s[\]]+)):(\d{1,5})$/.exec(raw);
  if (m === null) throw new InvalidValue(`"${raw}" must be HOST:PORT (IPv6 as [addr]:PORT)`);
  const port = Number(m[3]);
  if (port > 65535) throw new InvalidValue(`port ${port} is out of range [0, 65535]`);
  return { host: m[1] ?? m[2] ?? '', port };
}

/**
 * The Kafka endpoint this broker registers and Metadata names: --advertised-kafka-addr, else the
 * listener's host and `listenerPort` (the port it binds, fixed before registration when configured as 0).
 */
export function advertisedKafkaEndpoint(config: Pick<BrokerConfig, 'advertisedKafkaAddr' | 'kafkaHost'>, listenerPort: number): { host: string; port: number } {
  return config.advertisedKafkaAddr === '' ? { host: config.kafkaHost, port: listenerPort } : splitHostPort(config.advertisedKafkaAddr);
}

/**
 * Where clients reach a client listener bound at `boundPort`: advertised-listeners' entry for it,
 * else for the primary listener advertisedKafkaEndpoint, else its own address.
 */
export function advertisedListenerEndpoint(
  config: Pick<BrokerConfig, 'advertisedListeners' | 'advertisedKafkaAddr' | 'clientListeners' | 'kafkaHost'>,
  listener: ClientListener,
  boundPort: number,
): { host: string; port: number } {
  const named = config.advertisedListeners.get(listener.name);
  if (named !== undefined) return { ...named };
  if (listener === config.clientListeners[0]) return advertisedKafkaEndpoint(config, boundPort);
  return { host: listener.host, port: boundPort };
}

/**
 * Where other processes reach the admin HTTP listener bound at `host`:`boundPort` (a broker's
 * registration carries it): the bound host, or the advertised Kafka host when it bound a wildcard.
 */
export function advertisedAdminAddress(config: Pick<BrokerConfig, 'adminHost' | 'advertisedKafkaAddr' | 'kafkaHost'>, boundPort: number): string {
  const wildcard = config.adminHost === '' || config.adminHost === '0.0.0.0' || config.adminHost === '::';
  return joinHostPort(wildcard ? advertisedKafkaEndpoint(config, boundPort).host : config.adminHost, boundPort);
}

/** Inverse of splitHostPort (brackets IPv6 hosts). */
export function joinHostPort(host: string, port: number): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}

// ---- raw inputs ------------------------------------------------------------------------------

interface RawValue {
  readonly raw: string;
  readonly source: ConfigSource;
  readonly origin: string;
}

type RawInputs = Map<OptionKey, RawValue>;

function issue(key: string, v: Pick<RawValue, 'source' | 'origin'>, message: string): ConfigIssue {
  return { key, source: v.source, origin: v.origin, message };
}

/** Flags: --name value, --name=value; booleans also bare --name / --no-name. */
function readFlags(argv: readonly string[], issues: ConfigIssue[]): { flags: RawInputs; file?: string } {
  const flags: RawInputs = new Map();
  let file: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const token = argv[i] ?? '';
    const m = /^--([a-z][a-z0-9-]*)(?:=([\s\S]*))?$/.exec(token);
    const origin = { source: 'flag' as const, origin: token.split('=')[0] ?? token };
    if (m === null) {
      issues.push(issue(token, origin, 'unexpected argument'));
      continue;
    }
    const name = m[1] ?? '';
    const negated = name.startsWith('no-') && KEY_BY_FLAG.has(name.slice(3));
    const key = KEY_BY_FLAG.get(negated ? name.slice(3) : name);
    const isBool = key !== undefined && OPTIONS[key].boolean === true;
    let value = m[2];
    if (value === undefined && isBool) value = negated ? 'false' : 'true';
    else if (value === undefined) value = argv[++i];
    if (name === CONFIG_FILE_FLAG && value !== undefined) {
      file = value;
    } else if (name === CONFIG_FILE_FLAG) {
      issues.push(issue(name, origin, 'missing value'));
    } else if (key === undefined || (negated && !isBool)) {
      issues.push(issue(name, origin, 'unknown flag'));
    } else if (value === undefined) {
      issues.push(issue(flagName(key), origin, 'missing value'));
    } else {
      flags.set(key, { raw: value, source: 'flag', origin: `--${flagName(key)}` });
    }
  }
  return file === undefined ? { flags } : { flags, file };
}

function readEnv(env: NodeJS.ProcessEnv): RawInputs {
  const values: RawInputs = new Map();
  for (const key of OPTION_KEYS) {
    const name = envName(key);
    const raw = env[name];
    // An empty variable is treated as unset, the way shells make "unset" easy to write.
    if (raw !== undefined && raw !== '') values.set(key, { raw, source: 'env', origin: name });
  }
  return values;
}

function readFile(path: string, pathOrigin: RawValue, issues: ConfigIssue[]): RawInputs {
  const values: RawInputs = new Map();
  const origin = { source: 'file' as const, origin: `file ${path}` };
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    issues.push(issue(CONFIG_FILE_FLAG, pathOrigin, `cannot read ${path}: ${(err as Error).message}`));
    return values;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    issues.push(issue(CONFIG_FILE_FLAG, pathOrigin, `${path} must hold a JSON object`));
    return values;
  }
  for (const [name, v] of Object.entries(parsed)) {
    const key = KEY_BY_FLAG.get(name);
    if (key === undefined) issues.push(issue(name, origin, 'unknown key'));
    else if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean')
      values.set(key, { raw: String(v), ...origin });
    else issues.push(issue(name, origin, 'must be a string, number or boolean'));
  }
  return values;
}

// ---- resolution ------------------------------------------------------------------------------

type Resolved = { -readonly [K in OptionKey]: BrokerConfig[K] };

function resolveKey<K extends OptionKey>(
  key: K, raw: RawValue | undefined, values: Resolved, issues: ConfigIssue[],
): void {
  const option: Option<BrokerConfig[K]> = OPTIONS[key];
  if (raw === undefined) {
    values[key] = option.default();
    return;
  }
  try {
    values[key] = option.parse(raw.raw);
  } catch (err) {
    if (!(err instanceof InvalidValue)) throw err;
    issues.push(issue(flagName(key), raw, err.message));
  }
}

interface Relation {
  readonly keys: readonly OptionKey[];
  readonly holds: (c: Resolved) => boolean;
  readonly message: (c: Resolved) => string;
}

const RELATIONS: readonly Relation[] = [
  {
    // The SPSC ring maps byte counters to positions with a mask.
    keys: ['ringBytes'],
    holds: (c) => (c.ringBytes & (c.ringBytes - 1)) === 0,
    message: (c) => `ring-bytes (${c.ringBytes}) must be a power of two`,
  },
  {
    keys: ['maxRequestBytes', 'maxPartialRequestBytes'],
    holds: (c) => c.maxRequestBytes <= c.maxPartialRequestBytes,
    message: (c) =>
      `max-request-bytes (${c.maxRequestBytes}) must not exceed max-partial-request-bytes (${c.maxPartialRequestBytes})`,
  },
  {
    keys: ['messageMaxBytes', 'ringBytes'],
    holds: (c) => c.messageMaxBytes < c.ringBytes / 2,
    message: (c) =>
      `message-max-bytes (${c.messageMaxBytes}) must be less than ring-bytes/2 (${c.ringBytes / 2})`,
  },
  {
    keys: ['messageMaxBytes', 'maxRequestBytes'],
    holds: (c) => c.messageMaxBytes < c.maxRequestBytes,
    message: (c) =>
      `message-max-bytes (${c.messageMaxBytes}) must be less than max-request-bytes ` +
      `(${c.maxRequestBytes}), or no batch of that size could arrive`,
  },
  {
    keys: ['groupMinSessionTimeoutMs', 'groupMaxSessionTimeoutMs'],
    holds: (c) => c.groupMinSessionTimeoutMs <= c.groupMaxSessionTimeoutMs,
    message: (c) =>
      `group-min-session-timeout-ms (${c.groupMinSessionTimeoutMs}) must not exceed group-max-session-timeout-ms (${c.groupMaxSessionTimeoutMs})`,
  },
  {
    keys: ['brokerHeartbeatIntervalMs', 'brokerSessionTimeoutMs'],
    holds: (c) => c.brokerHeartbeatIntervalMs < c.brokerSessionTimeoutMs,
    message: (c) =>
      `broker-heartbeat-interval-ms (${c.brokerHeartbeatIntervalMs}) must be less than broker-session-timeout-ms (${c.brokerSessionTimeoutMs}), or every broker is fenced between heartbeats`,
  },
  {
    keys: ['roles', 'controllerVoters', 'nodeId'],
    holds: (c) => !c.roles.includes('controller') || c.controllerVoters.length === 0 || isVoter(c),
    message: (c) => `node ${c.nodeId} has the controller role but is not in controller-voters`,
  },
  {
    // Without voters this node is the whole quorum, so it must run it.
    keys: ['roles', 'controllerVoters'],
    holds: (c) => c.controllerVoters.length > 0 || c.roles.length === 0 || (c.roles.includes('broker') && c.roles.includes('controller')),
    message: (c) => `roles ${c.roles.join(',')} without controller-voters: a single node must be broker,controller`,
  },
  {
    keys: ['controllerAddr', 'controllerVoters', 'roles'],
    holds: (c) => c.controllerAddr === '' || derivedRoles(c).includes('controller'),
    message: (c) => `controller-addr is set but node ${c.nodeId} runs no controller (not in controller-voters, or roles lack controller)`,
  },
  {
    keys: ['listeners', 'listenerSecurityProtocolMap'],
    holds: (c) => c.listeners.every((l) => protocolOf(c, l.name) !== null),
    message: (c) => `listener ${c.listeners.find((l) => protocolOf(c, l.name) === null)?.name ?? ''} has no security protocol: name it in listener-security-protocol-map`,
  },
  {
    keys: ['advertisedListeners', 'listeners'],
    holds: (c) => [...c.advertisedListeners.keys()].every((n) => derivedListeners(c).some((l) => l.name === n)),
    message: () => 'advertised-listeners names a listener that listeners does not have',
  },
  {
    // As Kafka refuses it: a listener bound to a wildcard would tell clients and brokers to connect to it.
    keys: ['listeners', 'kafkaAddr', 'advertisedListeners', 'advertisedKafkaAddr'],
    holds: (c) => wildcardAdvertised(c) === undefined,
    message: (c) => {
      const l = wildcardAdvertised(c)!;
      return `listener ${l.name} binds the wildcard ${joinHostPort(l.host, l.port)}, which is no address to advertise: set --advertised-listeners ${l.name}://HOST:PORT`
        + `${l.name === derivedListeners(c)[0]!.name ? ' (or --advertised-kafka-addr HOST:PORT)' : ''} with an address clients reach, or bind a specific address`;
    },
  },
  {
    keys: ['sslCertFile', 'sslKeyFile', 'listeners'],
    holds: (c) => !derivedListeners(c).some((l) => usesTls(l.protocol)) || (c.sslCertFile !== '' && c.sslKeyFile !== ''),
    message: () => 'an SSL or SASL_SSL listener needs ssl-cert-file and ssl-key-file',
  },
  {
    keys: ['sslClientAuth', 'sslCaFile'],
    holds: (c) => c.sslClientAuth === 'none' || c.sslCaFile !== '',
    message: (c) => `ssl-client-auth ${c.sslClientAuth} needs ssl-ca-file to verify client certificates against`,
  },
  {
    keys: ['saslPlainUsersFile', 'saslEnabledMechanisms', 'listeners'],
    holds: (c) => !c.saslEnabledMechanisms.includes('PLAIN') || !derivedListeners(c).some((l) => usesSasl(l.protocol)) || c.saslPlainUsersFile !== '',
    message: () => 'PLAIN is enabled on a SASL listener but sasl-plain-users-file is not set',
  },
  {
    keys: ['interBrokerListener', 'sslCaFile'],
    holds: (c) => c.controllerVoters.length === 0 || !usesTls(interBrokerListenerOf(c)?.protocol ?? 'PLAINTEXT') || c.sslCaFile !== '',
    message: () => 'a TLS inter-broker listener needs ssl-ca-file: replica fetchers verify the other brokers\' certificates against it',
  },
  {
    keys: ['controllerSecurityProtocol', 'sslCertFile', 'sslKeyFile', 'sslCaFile'],
    holds: (c) => !usesTls(c.controllerSecurityProtocol) || (c.sslCertFile !== '' && c.sslKeyFile !== '' && c.sslCaFile !== ''),
    message: (c) => `controller-security-protocol ${c.controllerSecurityProtocol} needs ssl-cert-file, ssl-key-file and ssl-ca-file (controllers and brokers verify each other against it)`,
  },
  {
    keys: ['controllerSecurityProtocol', 'sslClientAuth'],
    holds: (c) => c.controllerSecurityProtocol !== 'SSL' || c.sslClientAuth === 'required',
    message: () => 'controller-security-protocol SSL authenticates peers by certificate only: it needs ssl-client-auth required (or use SASL_SSL)',
  },
  {
    keys: ['interBrokerListener', 'listeners'],
    holds: (c) => interBrokerListenerOf(c) !== undefined,
    message: (c) => `inter-broker-listener ${c.interBrokerListener} is not one of the listeners`,
  },
  {
    keys: ['interBrokerSaslUsername', 'interBrokerSaslPasswordFile', 'interBrokerListener', 'controllerSecurityProtocol'],
    holds: (c) => ![interBrokerListenerOf(c)?.protocol ?? 'PLAINTEXT', c.controllerSecurityProtocol].some(usesSasl) || (c.interBrokerSaslUsername !== '' && c.interBrokerSaslPasswordFile !== ''),
    message: () => 'a SASL inter-broker listener or controller-security-protocol needs inter-broker-sasl-username and inter-broker-sasl-password-file',
  },
  {
    keys: ['adminSslCertFile', 'adminSslKeyFile'],
    holds: (c) => (c.adminSslCertFile === '') === (c.adminSslKeyFile === ''),
    message: () => 'admin-ssl-cert-file and admin-ssl-key-file go together',
  },
  {
    keys: ['kafkaAddr', 'adminAddr'],
    holds: (c) => c.kafkaAddr !== c.adminAddr || splitHostPort(c.kafkaAddr).port === 0,
    message: (c) => `kafka-addr and admin-addr are both ${c.kafkaAddr}`,
  },
];

function isVoter(c: Pick<Resolved, 'controllerVoters' | 'nodeId'>): boolean {
  return c.controllerVoters.some((v) => v.id === c.nodeId);
}

/** Roles as set, or their default: both for a voter or a lone node, broker for an observer. */
function derivedRoles(c: Resolved): readonly NodeRole[] {
  if (c.roles.length > 0) return c.roles;
  return c.controllerVoters.length === 0 || isVoter(c) ? NODE_ROLES : ['broker'];
}

/** The controller listener to bind, '' for none (no controller role, or a single node not given one). */
function derivedControllerAddr(c: Resolved, roles: readonly NodeRole[]): string {
  if (!roles.includes('controller')) return '';
  if (c.controllerAddr !== '') return c.controllerAddr;
  const self = c.controllerVoters.find((v) => v.id === c.nodeId);
  return self === undefined ? '' : joinHostPort(self.host, self.port);
}

function checkRelations(values: Resolved, raws: Map<OptionKey, RawValue>, issues: ConfigIssue[]): void {
  for (const rel of RELATIONS) {
    if (rel.holds(values)) continue;
    const origins = rel.keys.map((k) => `${flagName(k)} from ${raws.get(k)?.origin ?? 'default'}`);
    // Blame the first key that was set explicitly: that is the one the user can change.
    const blamed = rel.keys.find((k) => raws.has(k)) ?? rel.keys[0];
    const at = raws.get(blamed) ?? { source: 'default' as const, origin: 'default' };
    issues.push(issue(flagName(blamed), at, `${rel.message(values)} [${origins.join(', ')}]`));
  }
}

/** A listener name's protocol: the map's, else the protocol of the same name; null when neither. */
function protocolOf(c: Pick<Resolved, 'listenerSecurityProtocolMap'>, name: string): SecurityProtocol | null {
  return c.listenerSecurityProtocolMap.get(name) ?? SECURITY_PROTOCOLS.find((p) => p === name) ?? null;
}

/** The client listeners, primary first: the first PLAINTEXT one (other brokers' replica fetchers use it unless inter-broker-listener names another), else the first. */
function derivedListeners(c: Resolved): ClientListener[] {
  if (c.listeners.length === 0) {
    const { host, port } = splitHostPort(c.kafkaAddr);
    return [{ name: 'PLAINTEXT', host, port, protocol: 'PLAINTEXT' }];
  }
  const all = c.listeners.map((l) => ({ ...l, protocol: protocolOf(c, l.name)! }));
  const primary = all.find((l) => l.protocol === 'PLAINTEXT') ?? all[0]!;
  return [primary, ...all.filter((l) => l !== primary)];
}

/** The first listener that binds a wildcard host and has no advertised address of its own. */
function wildcardAdvertised(c: Resolved): ClientListener | undefined {
  const all = derivedListeners(c);
  return all.find((l) => UNROUTABLE_HOSTS.includes(l.host)
    && !c.advertisedListeners.has(l.name) && !(l === all[0] && c.advertisedKafkaAddr !== ''));
}

/** The listener replica fetchers use: the one inter-broker-listener names, else the primary; undefined when it names none. */
function interBrokerListenerOf(c: Resolved): ClientListener | undefined {
  const all = derivedListeners(c);
  return c.interBrokerListener === '' ? all[0] : all.find((l) => l.name === c.interBrokerListener);
}

export const usesTls = (p: SecurityProtocol): boolean => p === 'SSL' || p === 'SASL_SSL';
export const usesSasl = (p: SecurityProtocol): boolean => p === 'SASL_PLAINTEXT' || p === 'SASL_SSL';

function expand(values: Resolved): BrokerConfig {
  const clientListeners = derivedListeners(values);
  const primary = clientListeners[0]!;
  const kafka = { host: primary.host, port: primary.port };
  const admin = splitHostPort(values.adminAddr);
  const roles = derivedRoles(values);
  const controllerAddr = derivedControllerAddr(values, roles);
  const controller = controllerAddr === '' ? { host: '', port: -1 } : splitHostPort(controllerAddr);
  return Object.freeze({
    ...values,
    kafkaAddr: joinHostPort(kafka.host, kafka.port),
    clientListeners,
    allowEveryoneIfNoAclFound: values.allowEveryoneIfNoAclFound ?? clientListeners.every((l) => l.protocol === 'PLAINTEXT'),
    roles,
    controllerAddr,
    controllerHost: controller.host,
    controllerPort: controller.port,
    kafkaHost: kafka.host,
    kafkaPort: kafka.port,
    adminHost: admin.host,
    adminPort: admin.port,
  });
}

function sourcesOf(raws: Map<OptionKey, RawValue>): ConfigSources {
  const sources = {} as Record<keyof BrokerConfig, ConfigSource>;
  for (const key of OPTION_KEYS) sources[key] = raws.get(key)?.source ?? 'default';
  sources.kafkaHost = sources.kafkaPort = sources.kafkaAddr;
  sources.clientListeners = sources.listeners;
  sources.adminHost = sources.adminPort = sources.adminAddr;
  sources.controllerHost = sources.controllerPort = sources.controllerAddr;
  return sources;
}

/**
 * Resolves the broker configuration. `argv` holds only config flags (plus --config FILE);
 * the config file may also be named by SLUICE_CONFIG. Throws ConfigError listing every problem.
 */
export function resolveConfig(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
): { config: BrokerConfig; sources: ConfigSources } {
  const issues: ConfigIssue[] = [];
  const { flags, file: fileFlag } = readFlags(argv, issues);
  const envValues = readEnv(env);
  const envFile = env.SLUICE_CONFIG === '' ? undefined : env.SLUICE_CONFIG;
  const filePath = fileFlag ?? envFile;
  const fileOrigin: RawValue = fileFlag !== undefined
    ? { raw: fileFlag, source: 'flag', origin: '--config' }
    : { raw: filePath ?? '', source: 'env', origin: 'SLUICE_CONFIG' };
  const fileValues = filePath === undefined ? new Map() : readFile(filePath, fileOrigin, issues);

  const raws = new Map<OptionKey, RawValue>();
  const values = {} as Resolved;
  for (const key of OPTION_KEYS) {
    const raw = flags.get(key) ?? envValues.get(key) ?? fileValues.get(key);
    if (raw !== undefined) raws.set(key, raw);
    resolveKey(key, raw, values, issues);
  }
  const listenersRaw = raws.get('listeners');
  if (listenersRaw !== undefined && raws.has('kafkaAddr') && values.listeners.length > 0) {
    issues.push(issue('listeners', listenersRaw, 'set both listeners and kafka-addr: listeners replaces kafka-addr, set one'));
  }
  if (issues.length === 0) checkRelations(values, raws, issues);
  if (issues.length > 0) throw new ConfigError(issues);
  return { config: expand(values), sources: sourcesOf(raws) };
}

export interface ConfigEntry {
  readonly key: string;
  readonly value: Printable;
  readonly source: ConfigSource;
}

/** One entry per config flag, valued as it would be written on the command line. */
export function configEntries(config: BrokerConfig, sources: ConfigSources): ConfigEntry[] {
  return OPTION_KEYS.map((key) => ({
    key: flagName(key),
    value: printable(key, config[key]),
    source: sources[key],
  }));
}

/**
 * Printable form of the configuration: aligned `key value source` lines, or a JSON object of
 * {key: {value, source}}; `include` selects entries (default: all).
 */
/** The settings kept by `include`: as data (key -> value and source) and as aligned text. */
export function describeConfig(
  config: BrokerConfig,
  sources: ConfigSources,
  include: (entry: ConfigEntry) => boolean = () => true,
): { data: Record<string, { value: unknown; source: string }>; text: string } {
  const entries = configEntries(config, sources).filter(include);
  const data = Object.fromEntries(entries.map((e) => [e.key, { value: e.value, source: e.source }]));
  const keyWidth = Math.max(0, ...entries.map((e) => e.key.length));
  const valueWidth = Math.max(0, ...entries.map((e) => String(e.value).length));
  const text = entries
    .map((e) => `${e.key.padEnd(keyWidth)}  ${String(e.value).padEnd(valueWidth)}  ${e.source}`)
    .join('\n');
  return { data, text };
}
