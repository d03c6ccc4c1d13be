// Client quotas as Kafka's ClientQuotaManager applies them (KIP-13, KIP-55, KIP-124, KIP-219),
// pure: the clock is passed in (ms) and the quota configs are read through a map the caller
// keeps current (the metadata image's). Owns the quota vocabulary (entities, keys, how an entity
// is written as a map key), how a (user, client-id) finds its quota (Kafka's precedence, most
// specific first), and one windowed rate (ThrottleQuota: 11 samples of 1 s by default) per quota
// entity in use. record() counts a request's bytes or time against its entity and answers the
// delay KIP-219 asks of the client: (rate - quota) / quota of the window span, capped. Entities
// that match through a <default> have one rate per actual user or client id (a default is a
// quota each of them gets, not one they share); named entities are shared by everything they
// match. Main thread (the connection layer charges requests there).
// An `ip` entity (KIP-612) carries only connection_creation_rate, which the listeners' connection
// bounds apply per client address (resolveConnectionRate: the address's own, else the <default> ip).
import { isIP } from 'node:net';
import { ErrorCode, KafkaError } from '../protocol/errors.js';
import { ThrottleQuota, type QuotaWindows } from './replication/throttle_quota.js';

/** The quota keys Sluice applies, by Kafka's names: the client ones, then the ip one. */
export const QUOTA_KEYS = ['producer_byte_rate', 'consumer_byte_rate', 'request_percentage', 'connection_creation_rate'] as const;
export type QuotaKey = (typeof QUOTA_KEYS)[number];
/** The keys a (user, client id) is charged against. */
export type ClientQuotaKey = Exclude<QuotaKey, 'connection_creation_rate'>;
const IP_QUOTA_KEY = 'connection_creation_rate';

export function isQuotaKey(key: string): key is QuotaKey {
  return (QUOTA_KEYS as readonly string[]).includes(key);
}

/** Kafka's entity types for client quotas. */
export const USER_ENTITY = 'user';
export const CLIENT_ID_ENTITY = 'client-id';
export const IP_ENTITY = 'ip';

/**
 * A quota entity: a user, a client id, or both; or an ip alone. Absent (undefined): the entity
 * does not name that part; null: the <default> of that part; a string: that name.
 */
export interface QuotaEntity {
  readonly user?: string | null;
  readonly clientId?: string | null;
  readonly ip?: string | null;
}

/** A quota entity's configured values. */
export type QuotaValues = Readonly<Partial<Record<QuotaKey, number>>>;

/** The principal name of an unauthenticated connection, as Kafka's quotas see it. */
export const ANONYMOUS_USER = 'ANONYMOUS';

/** Bounds on what one entity may carry, checked where alterations and records are accepted. */
export const MAX_QUOTA_NAME_CHARS = 256;
/** Bound on quota entities in the cluster (each is an image entry on every node). */
export const MAX_QUOTA_ENTITIES = 100_000;

/** The key of an entity in the image's quota map: one string per distinct entity. */
export function quotaEntityKey(e: QuotaEntity): string {
  const userAndClient = [e.user === undefined ? 0 : e.user, e.clientId === undefined ? 0 : e.clientId];
  return JSON.stringify(e.ip === undefined ? userAndClient : [...userAndClient, e.ip]);
}

/** An entity's parts, (type, name or null for <default>), in the order Kafka writes them: user, client id, ip. */
export function quotaEntityParts(e: QuotaEntity): Array<{ entityType: string; entityName: string | null }> {
  const parts: Array<{ entityType: string; entityName: string | null }> = [];
  if (e.user !== undefined) parts.push({ entityType: USER_ENTITY, entityName: e.user });
  if (e.clientId !== undefined) parts.push({ entityType: CLIENT_ID_ENTITY, entityName: e.clientId });
  if (e.ip !== undefined) parts.push({ entityType: IP_ENTITY, entityName: e.ip });
  return parts;
}

/** The entity a quotaEntityKey was made from. */
export function quotaEntityOf(key: string): QuotaEntity {
  const [user, clientId, ip] = JSON.parse(key) as [string | null | 0, string | null | 0, (string | null)?];
  return { ...(user === 0 ? {} : { user }), ...(clientId === 0 ? {} : { clientId }), ...(ip === undefined ? {} : { ip }) };
}

/**
 * Checks a quota value for an entity as Kafka's ClientQuotaControlManager does: an ip entity takes
 * only connection_creation_rate and a user or client id entity only the others; rates whole and
 * positive, percentages positive.
 */
export function validateQuotaValue(entity: QuotaEntity, key: string, value: number): void {
  if (!isQuotaKey(key)) throw new KafkaError(ErrorCode.INVALID_REQUEST, `unknown or unsupported quota key ${key}`);
  if ((entity.ip !== undefined) !== (key === IP_QUOTA_KEY)) {
    throw new KafkaError(ErrorCode.INVALID_REQUEST, `quota key ${key} does not apply to ${entity.ip !== undefined ? 'an ip' : 'a user or client id'} entity`);
  }
  if (!Number.isFinite(value) || value <= 0) throw new KafkaError(ErrorCode.INVALID_REQUEST, `${key} must be a positive number, got ${value}`);
  if (key !== 'request_percentage' && !Number.isInteger(value)) throw new KafkaError(ErrorCode.INVALID_REQUEST, `${key} must be a whole number per second, got ${value}`);
}

/** Checks an entity's names: a name is non-empty and bounded, an ip an IP address and alone; some part is named or defaulted. */
export function validateQuotaEntity(e: QuotaEntity): void {
  if (e.ip !== undefined) {
    if (e.user !== undefined || e.clientId !== undefined) throw new KafkaError(ErrorCode.INVALID_REQUEST, 'an ip quota entity names no user or client id');
    if (e.ip !== null && isIP(e.ip) === 0) throw new KafkaError(ErrorCode.INVALID_REQUEST, `${e.ip.slice(0, MAX_QUOTA_NAME_CHARS)} is not an IP address`);
    return;
  }
  if (e.user === undefined && e.clientId === undefined) throw new KafkaError(ErrorCode.INVALID_REQUEST, 'a quota entity names a user, a client id or both, or an ip');
  for (const name of [e.user, e.clientId]) {
    if (typeof name === 'string' && (name === '' || name.length > MAX_QUOTA_NAME_CHARS)) {
      throw new KafkaError(ErrorCode.INVALID_REQUEST, `a quota entity name must have 1 to ${MAX_QUOTA_NAME_CHARS} characters`);
    }
  }
}

/**
 * The entities a (user, client id) may take its quota from, most specific first (Kafka's
 * ClientQuotaManager order), each with the tags its rate is kept under: the actual names where
 * the entity matches them by <default>, nothing where it does not name that part.
 */
function candidates(user: string, clientId: string): ReadonlyArray<{ readonly entity: string; readonly sensor: string }> {
  const both = JSON.stringify([user, clientId]);
  const userOnly = JSON.stringify([user, 0]);
  const clientOnly = JSON.stringify([0, clientId]);
  return [
    { entity: quotaEntityKey({ user, clientId }), sensor: both },
    { entity: quotaEntityKey({ user, clientId: null }), sensor: both },
    { entity: quotaEntityKey({ user }), sensor: userOnly },
    { entity: quotaEntityKey({ user: null, clientId }), sensor: both },
    { entity: quotaEntityKey({ user: null, clientId: null }), sensor: both },
    { entity: quotaEntityKey({ user: null }), sensor: userOnly },
    { entity: quotaEntityKey({ clientId }), sensor: clientOnly },
    { entity: quotaEntityKey({ clientId: null }), sensor: clientOnly },
  ];
}

/** Where a (user, client id)'s quota of one key comes from. */
export interface ResolvedQuota {
  /** The entity whose value applies (a quotaEntityKey). */
  readonly entity: string;
  /** The rate it is counted in: shared by every (user, client id) resolving to the same one. */
  readonly sensor: string;
  readonly bound: number;
}

/** The quota of `key` that applies to (user, clientId), or null when none does. */
export function resolveQuota(configs: ReadonlyMap<string, QuotaValues>, key: ClientQuotaKey, user: string, clientId: string): ResolvedQuota | null {
  for (const c of candidates(user, clientId)) {
    const bound = configs.get(c.entity)?.[key];
    if (bound !== undefined) return { entity: c.entity, sensor: `${key}:${c.sensor}`, bound };
  }
  return null;
}

const DEFAULT_IP_KEY = quotaEntityKey({ ip: null });

/** The connection creation rate (per second) configured for client address `ip`: its own, else the <default> ip's; undefined: neither. */
export function resolveConnectionRate(configs: ReadonlyMap<string, QuotaValues>, ip: string): number | undefined {
  return configs.get(quotaEntityKey({ ip }))?.[IP_QUOTA_KEY] ?? configs.get(DEFAULT_IP_KEY)?.[IP_QUOTA_KEY];
}

export interface ClientQuotaSettings extends QuotaWindows {
  /** Bound on rates kept at once (one per quota entity in use); the idle ones go first. */
  readonly maxSensors: number;
}

/** Kafka's defaults: quota.window.num = 11 samples of quota.window.size.seconds = 1. */
export const CLIENT_QUOTA_DEFAULTS: ClientQuotaSettings = { windowMs: 1000, windows: 11, maxSensors: 50_000 };

/** Request time counts as a percentage of one thread per second: 1 ms of work is 0.1 %·s. */
const PERCENT_PER_MS = 0.1;

interface Sensor {
  readonly rate: ThrottleQuota;
  lastUsedMs: number;
}

export class ClientQuotas {
  private readonly sensors = new Map<string, Sensor>();

  constructor(
    /** The configured quotas by quotaEntityKey, as the current metadata image holds them. */
    private readonly configs: () => ReadonlyMap<string, QuotaValues>,
    private readonly settings: ClientQuotaSettings = CLIENT_QUOTA_DEFAULTS,
  ) {}

  /** Whether any quota is configured: the one check a request pays when none is. */
  get active(): boolean {
    return this.configs().size > 0;
  }

  /** Rates kept now (bounded by maxSensors). */
  get sensorCount(): number {
    return this.sensors.size;
  }

  /** The longest delay asked of a client: the whole window the rate is measured over. */
  get maxDelayMs(): number {
    return this.settings.windowMs * this.settings.windows;
  }

  /**
   * Counts `amount` (bytes for the byte rates, milliseconds of request time for
   * request_percentage) against (user, clientId)'s quota of `key` at `nowMs`, and answers the
   * delay the client is asked to pause for (0: within its quota, or no quota applies).
   */
  record(key: ClientQuotaKey, user: string, clientId: string, amount: number, nowMs: number): number {
    const quota = resolveQuota(this.configs(), key, user, clientId);
    if (quota === null) return 0;
    const sensor = this.sensor(quota.sensor, nowMs);
    sensor.rate.setRate(quota.bound);
    sensor.rate.record(key === 'request_percentage' ? amount * PERCENT_PER_MS : amount, nowMs);
    return sensor.rate.delayMs(nowMs, this.maxDelayMs);
  }

  private sensor(name: string, nowMs: number): Sensor {
    let s = this.sensors.get(name);
    if (s === undefined) {
      if (this.sensors.size >= this.settings.maxSensors) this.evict(nowMs);
      s = { rate: new ThrottleQuota(this.settings), lastUsedMs: nowMs };
      this.sensors.set(name, s);
    }
    s.lastUsedMs = nowMs;
    return s;
  }

  /** Makes room: rates idle for a whole window (they read as 0 anyway), else the oldest made. */
  private evict(nowMs: number): void {
    for (const [name, s] of this.sensors) if (nowMs - s.lastUsedMs > this.maxDelayMs) this.sensors.delete(name);
    if (this.sensors.size >= this.settings.maxSensors) this.sensors.delete(this.sensors.keys().next().value!);
  }
}
