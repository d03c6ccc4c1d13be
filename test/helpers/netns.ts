// Test harness: a private network of Linux network namespaces on this machine, for process tests
// that cut real TCP traffic between brokers. Runs on the test's main thread; needs root and
// iproute2's `ip`. Each host is a namespace with one address 10.77.S.(10+i)/32 on a veth whose
// other end is in a router namespace; the router forwards between hosts and to one veth into the
// root namespace, so the test process reaches every host while host-to-host traffic can be cut
// in the router alone: policy rules there (`ip rule ... blackhole`) drop chosen flows silently,
// the way a dead link or a firewall does, with no reset or ICMP for the sender to notice.
// No iptables/nft and no tc actions are needed (neither exists on every machine we run on).
// Invariants: only 10.77.S.0/24 is routed, and only between these namespaces and the root one;
// every name carries the creating process's pid, so cleanupStale() can tell leftovers of a dead
// run from a live run's; destroy() (also run on exit, SIGINT and SIGTERM) kills what runs in
// the namespaces and removes them, which removes their links and the root route with them.

import { execFileSync, spawn } from 'node:child_process';
import type { ChildProcess, SpawnOptions } from 'node:child_process';

const PREFIX = 'slnt';
/**
 * Fabric names are `slnt<pid>x<n>` (the root end of the router's uplink has exactly this name, at
 * most 15 characters), the availability probe's `slnt<pid>xprobe`.
 */
const OWNER_PATTERN = new RegExp(`^${PREFIX}(\\d+)x`);
const ROUTER_ADDR_OCTET = 1;
const ROOT_ADDR_OCTET = 254;
const FIRST_HOST_OCTET = 10;
/** Hosts per fabric: addresses 10.77.S.11 up to .210 stay clear of the router's and the root's. */
export const MAX_HOSTS = 200;
/** Rules that cut traffic; below the main table's 32766 so they win over every route. */
const CUT_PRIORITY = 100;
const IP_TIMEOUT_MS = 10_000;

function ip(args: readonly string[]): string {
  return execFileSync('ip', args, { encoding: 'utf8', timeout: IP_TIMEOUT_MS, stdio: ['ignore', 'pipe', 'pipe'] });
}

/** Like ip(), for teardown: a thing already gone is not an error. */
function ipQuiet(args: readonly string[]): void {
  try {
    ip(args);
  } catch {
    // already removed (or never created): teardown goes on with the rest
  }
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** SIGKILLs every process inside namespace `ns`, then removes it (bounded; quiet if it is gone). */
function removeNamespace(ns: string): void {
  let pids: number[] = [];
  try {
    pids = ip(['netns', 'pids', ns]).split('\n').filter((l) => l.trim() !== '').map(Number);
  } catch {
    return;
  }
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // exited meanwhile
    }
  }
  ipQuiet(['netns', 'del', ns]);
}

function namespaces(): string[] {
  return ip(['netns', 'list']).split('\n').map((l) => l.split(' ')[0] ?? '').filter((n) => n !== '');
}

/**
 * Why network-namespace tests cannot run here, or false when they can: they need root, `ip`, and
 * a kernel that lets us add a namespace (probed by adding and removing one).
 */
export function netnsUnavailable(): string | false {
  if (process.platform !== 'linux') return 'network namespaces need Linux';
  if (process.getuid?.() !== 0) return 'network namespaces need root (ip netns add)';
  const probe = `${PREFIX}${process.pid}xprobe`;
  try {
    ip(['netns', 'add', probe]);
  } catch (err) {
    return `\`ip netns add\` does not work here: ${(err as Error).message.split('\n')[0] ?? ''}`;
  }
  ipQuiet(['netns', 'del', probe]);
  return false;
}

/** Removes namespaces and root links left by fabrics whose process died; returns their names. */
export function cleanupStale(): string[] {
  const removed: string[] = [];
  const stale = (name: string): boolean => {
    const m = OWNER_PATTERN.exec(name);
    return m !== null && Number(m[1]) !== process.pid && !processAlive(Number(m[1]));
  };
  for (const ns of namespaces().filter(stale)) {
    removeNamespace(ns);
    removed.push(ns);
  }
  const links = ip(['-o', 'link', 'show']).split('\n').map((l) => /^\d+: ([^:@]+)/.exec(l)?.[1] ?? '').filter(stale);
  for (const link of links) {
    ipQuiet(['link', 'del', link]);
    removed.push(link);
  }
  return removed;
}

/** The third octet of a 10.77.S.0/24 that no route or address in the root namespace uses yet. */
function freeSubnet(seed: number): number {
  const used = ip(['-4', '-o', 'route', 'show']) + ip(['-4', '-o', 'addr', 'show']);
  for (let i = 0; i < 250; i++) {
    const s = 1 + ((seed + i) % 250);
    if (!used.includes(`10.77.${s}.`)) return s;
  }
  throw new Error('no free 10.77.S.0/24 subnet for a test network');
}

let fabricsMade = 0;
/** Fabrics not destroyed yet; torn down if the process exits or is interrupted. */
const live = new Set<NetFabric>();

function teardownLive(): void {
  for (const f of live) f.destroy();
}
process.once('exit', teardownLive);
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    teardownLive();
    process.kill(process.pid, signal);
  });
}

export class NetFabric {
  /** Active cut rules in the router, as the `ip rule` selector that adds (and deletes) each. */
  private readonly rules = new Set<string>();
  private destroyed = false;

  private constructor(
    /** `slnt<pid>x<n>`: the prefix of every name this fabric owns. */
    readonly tag: string,
    private readonly subnet: number,
    /** Hosts are numbered 1..size. */
    readonly size: number,
  ) {}

  /** A fabric of `hosts` namespaces, all reachable from each other and from this process. */
  static create(hosts: number): NetFabric {
    if (!Number.isSafeInteger(hosts) || hosts < 1 || hosts > MAX_HOSTS) throw new Error(`a fabric has 1 to ${MAX_HOSTS} hosts, got ${hosts}`);
    const tag = `${PREFIX}${process.pid}x${fabricsMade++}`;
    const f = new NetFabric(tag, freeSubnet(process.pid + fabricsMade * 37), hosts);
    live.add(f);
    try {
      f.build();
    } catch (err) {
      f.destroy();
      throw err;
    }
    return f;
  }

  private get routerNs(): string {
    return `${this.tag}-r`;
  }

  namespace(host: number): string {
    this.checkHost(host);
    return `${this.tag}-h${host}`;
  }

  address(host: number): string {
    this.checkHost(host);
    return this.addr(FIRST_HOST_OCTET + host);
  }

  private addr(octet: number): string {
    return `10.77.${this.subnet}.${octet}`;
  }

  private checkHost(host: number): void {
    if (!Number.isSafeInteger(host) || host < 1 || host > this.size) throw new Error(`no host ${host} in a fabric of ${this.size}`);
  }

  private build(): void {
    const r = this.routerNs;
    const router = this.addr(ROUTER_ADDR_OCTET);
    const rootEnd = this.addr(ROOT_ADDR_OCTET);
    ip(['netns', 'add', r]);
    ip(['-n', r, 'link', 'set', 'lo', 'up']);
    execFileSync('ip', ['netns', 'exec', r, 'sh', '-c', 'echo 1 > /proc/sys/net/ipv4/ip_forward'], { timeout: IP_TIMEOUT_MS });
    // The uplink: its router end is up before the root end routes through it.
    ip(['link', 'add', this.tag, 'type', 'veth', 'peer', 'name', 'uplink', 'netns', r]);
    ip(['-n', r, 'addr', 'add', `${router}/32`, 'dev', 'uplink']);
    ip(['-n', r, 'link', 'set', 'uplink', 'up']);
    ip(['-n', r, 'route', 'add', `${rootEnd}/32`, 'dev', 'uplink']);
    ip(['addr', 'add', `${rootEnd}/32`, 'dev', this.tag]);
    ip(['link', 'set', this.tag, 'up']);
    ip(['route', 'add', `${this.addr(0)}/24`, 'via', router, 'dev', this.tag, 'onlink']);
    for (let h = 1; h <= this.size; h++) {
      const ns = this.namespace(h);
      const port = `to${h}`;
      ip(['netns', 'add', ns]);
      ip(['-n', ns, 'link', 'set', 'lo', 'up']);
      ip(['-n', r, 'link', 'add', port, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', ns]);
      ip(['-n', r, 'addr', 'add', `${router}/32`, 'dev', port]);
      ip(['-n', r, 'link', 'set', port, 'up']);
      ip(['-n', r, 'route', 'add', `${this.address(h)}/32`, 'dev', port]);
      ip(['-n', ns, 'addr', 'add', `${this.address(h)}/32`, 'dev', 'eth0']);
      ip(['-n', ns, 'link', 'set', 'eth0', 'up']);
      ip(['-n', ns, 'route', 'add', `${router}/32`, 'dev', 'eth0']);
      ip(['-n', ns, 'route', 'add', `${this.addr(0)}/24`, 'via', router, 'dev', 'eth0']);
    }
  }

  /** Runs `command` inside host's namespace (`ip netns exec` execs it: the child's pid is the command's). */
  spawnIn(host: number, command: string, args: readonly string[], options: SpawnOptions = {}): ChildProcess {
    return spawn('ip', ['netns', 'exec', this.namespace(host), command, ...args], options);
  }

  private addRule(selector: string): void {
    if (this.rules.has(selector)) return;
    ip(['-n', this.routerNs, 'rule', 'add', ...selector.split(' '), 'priority', String(CUT_PRIORITY), 'blackhole']);
    this.rules.add(selector);
  }

  /** Every packet from `from` to `to` is dropped; the other direction still flows (so TCP between them stalls both ways). */
  cutOneWay(from: number, to: number): void {
    this.addRule(`from ${this.address(from)} to ${this.address(to)}`);
  }

  /** No packet passes between `a` and `b`, in either direction. */
  cut(a: number, b: number): void {
    this.cutOneWay(a, b);
    this.cutOneWay(b, a);
  }

  /** `host` is cut from every other host; this process still reaches it. */
  isolate(host: number): void {
    for (let h = 1; h <= this.size; h++) if (h !== host) this.cut(host, h);
  }

  /**
   * TCP connections that `from` opens to `to` never get through, while those `to` opens to `from`
   * work in both directions: the router drops `from`'s packets that leave one of its ephemeral
   * ports (its ip_local_port_range), which only connections it initiated use. Holds as long as
   * the hosts' listeners are on ports below that range.
   */
  blockConnects(from: number, to: number): void {
    const range = execFileSync('ip', ['netns', 'exec', this.namespace(from), 'cat', '/proc/sys/net/ipv4/ip_local_port_range'], { encoding: 'utf8', timeout: IP_TIMEOUT_MS });
    const [low, high] = range.trim().split(/\s+/);
    this.addRule(`from ${this.address(from)} to ${this.address(to)} ipproto tcp sport ${low ?? ''}-${high ?? ''}`);
  }

  /** Removes every cut: all hosts reach each other again. */
  heal(): void {
    for (const selector of this.rules) {
      ip(['-n', this.routerNs, 'rule', 'del', ...selector.split(' '), 'priority', String(CUT_PRIORITY), 'blackhole']);
      this.rules.delete(selector);
    }
  }

  /** Kills everything running in the hosts and removes all namespaces (idempotent). */
  destroy(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    live.delete(this);
    for (let h = 1; h <= this.size; h++) removeNamespace(`${this.tag}-h${h}`);
    removeNamespace(this.routerNs);
    ipQuiet(['link', 'del', this.tag]);
  }
}
