// The network-namespace fabric (test/helpers/netns.ts) does what the partition tests rely on: every
// host reaches every other and this process reaches all; cut, cutOneWay, blockConnects and isolate
// stop exactly the traffic they name and heal restores it; destroy leaves nothing behind, and
// cleanupStale removes a dead run's leftovers but not a live fabric. Hosts run a small TCP and UDP
// server on port 7000 (below the ephemeral range, as blockConnects requires) and probe from there.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { connect } from 'node:net';
import { NetFabric, cleanupStale, netnsUnavailable } from '../helpers/netns.js';
import { sleep } from '../helpers/broker_process.js';

const UNAVAILABLE = netnsUnavailable();
const PORT = 7000;
/** A connect within the machine takes well under a millisecond; a cut one never completes. */
const PROBE_MS = 1_000;

let fabric: NetFabric | null = null;

/**
 * A node process in one host: serves TCP (a greeting) and UDP (prints each datagram) on PORT, and
 * runs probes the test writes to its stdin, so a probe costs a line instead of a process start.
 */
function agentScript(addr: string): string {
  return `const net = require('net'), dgram = require('dgram');
net.createServer((s) => s.end('hi')).listen(${PORT}, '${addr}', () => {
  const u = dgram.createSocket('udp4');
  u.on('message', (m) => console.log('udp ' + m));
  u.bind(${PORT}, '${addr}', () => console.log('ready'));
});
require('readline').createInterface({ input: process.stdin }).on('line', (line) => {
  const [op, id, target] = line.split(' ');
  if (op === 'udp') {
    const c = dgram.createSocket('udp4');
    c.send(id, ${PORT}, target, () => { c.close(); console.log('sent ' + id); });
    return;
  }
  const s = net.connect(${PORT}, target);
  let got = '', done = false;
  const end = (r) => { if (!done) { done = true; s.destroy(); console.log('tcp ' + id + ' ' + r); } };
  s.setTimeout(${PROBE_MS}, () => end('timeout'));
  s.on('data', (d) => { got += d; });
  s.on('end', () => end(got === 'hi' ? 'ok' : 'bad ' + got));
  s.on('error', (e) => end(e.code));
});`;
}

class Agent {
  /** Datagrams this host received, by payload. */
  readonly datagrams = new Set<string>();
  private readonly waiting = new Map<string, (answer: string) => void>();
  private nextId = 0;
  readonly ready: Promise<void>;

  constructor(private readonly child: ChildProcess) {
    let buf = '';
    let markReady = (): void => undefined;
    this.ready = new Promise((resolve, reject) => {
      markReady = resolve;
      child.once('exit', (code) => reject(new Error(`agent exited with ${String(code)}`)));
    });
    child.stdout?.on('data', (d: Buffer) => {
      buf += d.toString();
      const lines = buf.split('\n');
      buf = lines.pop() ?? '';
      for (const line of lines) {
        const [kind, id, ...rest] = line.split(' ');
        if (kind === 'ready') markReady();
        else if (kind === 'udp') this.datagrams.add(id ?? '');
        else this.waiting.get(id ?? '')?.(rest.join(' '));
      }
    });
  }

  private ask(op: 'tcp' | 'udp', id: string, target: string): Promise<string> {
    return new Promise((resolve) => {
      this.waiting.set(id, (answer) => {
        this.waiting.delete(id);
        resolve(answer);
      });
      this.child.stdin?.write(`${op} ${id} ${target}\n`);
    });
  }

  tcp(target: string): Promise<string> {
    return this.ask('tcp', String(this.nextId++), target);
  }

  async udp(target: string, mark: string): Promise<void> {
    await this.ask('udp', mark, target);
  }
}

const agents = new Map<number, Agent>();

/** 'ok' if host `from` (0: this process) opens a TCP connection to `to` and reads its greeting; else why not. */
function tcp(f: NetFabric, from: number, to: number): Promise<string> {
  const agent = agents.get(from);
  if (agent !== undefined) return agent.tcp(f.address(to));
  return new Promise((resolve) => {
    const s = connect(PORT, f.address(to));
    let got = '';
    s.setTimeout(PROBE_MS, () => { s.destroy(); resolve('timeout'); });
    s.on('data', (d: Buffer) => { got += d.toString(); });
    s.on('end', () => { s.destroy(); resolve(got === 'hi' ? 'ok' : `bad ${got}`); });
    s.on('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message));
  });
}

/** Sends one UDP datagram from host `from` to host `to`; true if `to` received it. */
async function udpArrives(f: NetFabric, from: number, to: number): Promise<boolean> {
  const mark = `from-${from}-${Date.now()}`;
  await (agents.get(from) as Agent).udp(f.address(to), mark);
  await sleep(200);
  return (agents.get(to) as Agent).datagrams.has(mark);
}

/** TCP reachability of every ordered pair among hosts 1..3 and from this process, as "a>b" -> result. */
async function matrix(f: NetFabric): Promise<Record<string, string>> {
  const pairs: [number, number][] = [];
  for (let a = 0; a <= 3; a++) for (let b = 1; b <= 3; b++) if (a !== b) pairs.push([a, b]);
  const results = await Promise.all(pairs.map(([a, b]) => tcp(f, a, b)));
  return Object.fromEntries(pairs.map(([a, b], i) => [`${a}>${b}`, results[i] as string]));
}

function expectMatrix(got: Record<string, string>, blocked: readonly string[]): void {
  const want = Object.fromEntries(Object.keys(got).map((k) => [k, blocked.includes(k) ? 'timeout' : 'ok']));
  assert.deepEqual(got, want);
}

before(async () => {
  if (UNAVAILABLE !== false) return;
  cleanupStale();
  const f = NetFabric.create(3);
  fabric = f;
  for (const h of [1, 2, 3]) agents.set(h, new Agent(f.spawnIn(h, process.execPath, ['-e', agentScript(f.address(h))], { stdio: ['pipe', 'pipe', 'inherit'] })));
  await Promise.all([...agents.values()].map((a) => a.ready));
});
after(() => {
  fabric?.destroy();
});

test('every host reaches every other, and this process reaches all', { skip: UNAVAILABLE, timeout: 30_000 }, async () => {
  expectMatrix(await matrix(fabric as NetFabric), []);
});

test('cut stops both directions between two hosts only; heal restores them', { skip: UNAVAILABLE, timeout: 30_000 }, async () => {
  const f = fabric as NetFabric;
  f.cut(1, 2);
  try {
    expectMatrix(await matrix(f), ['1>2', '2>1']);
  } finally {
    f.heal();
  }
  expectMatrix(await matrix(f), []);
});

test('cutOneWay drops one direction: datagrams still flow the other way, TCP between the two stalls', { skip: UNAVAILABLE, timeout: 30_000 }, async () => {
  const f = fabric as NetFabric;
  f.cutOneWay(1, 2);
  try {
    assert.equal(await udpArrives(f, 1, 2), false, 'host 1 -> host 2 is dropped');
    assert.equal(await udpArrives(f, 2, 1), true, 'host 2 -> host 1 still arrives');
    expectMatrix(await matrix(f), ['1>2', '2>1']);
  } finally {
    f.heal();
  }
  assert.equal(await udpArrives(f, 1, 2), true);
});

test('blockConnects: connections one host opens to another fail, the other way round they work both ways', { skip: UNAVAILABLE, timeout: 30_000 }, async () => {
  const f = fabric as NetFabric;
  f.blockConnects(1, 2);
  try {
    // 2>1 reads host 1's greeting: host 1's packets to host 2 pass on a connection host 2 opened.
    expectMatrix(await matrix(f), ['1>2']);
  } finally {
    f.heal();
  }
  expectMatrix(await matrix(f), []);
});

test('isolate cuts a host from all others but not from this process', { skip: UNAVAILABLE, timeout: 30_000 }, async () => {
  const f = fabric as NetFabric;
  f.isolate(3);
  try {
    expectMatrix(await matrix(f), ['1>3', '3>1', '2>3', '3>2']);
  } finally {
    f.heal();
  }
  expectMatrix(await matrix(f), []);
});

test('destroy removes namespaces, links and routes; cleanupStale removes a dead run\'s leftovers only', { skip: UNAVAILABLE, timeout: 30_000 }, async () => {
  const own = NetFabric.create(2);
  const sleeper = own.spawnIn(1, 'sleep', ['60']);
  // A namespace named as a fabric of a process that no longer exists.
  const dead = spawn('true');
  await new Promise((resolve) => dead.once('exit', resolve));
  const staleNs = `slnt${String(dead.pid)}x0-h1`;
  execFileSync('ip', ['netns', 'add', staleNs]);
  const removed = cleanupStale();
  const listed = execFileSync('ip', ['netns', 'list'], { encoding: 'utf8' });
  assert.deepEqual(removed, [staleNs]);
  assert.ok(listed.includes(own.namespace(1)), 'a live fabric survives cleanupStale');
  const exited = new Promise((resolve) => sleeper.once('exit', (_code, signal) => resolve(signal)));
  own.destroy();
  assert.equal(await exited, 'SIGKILL', 'what ran in the fabric is killed');
  const after = execFileSync('ip', ['netns', 'list'], { encoding: 'utf8' }) + execFileSync('ip', ['-o', 'link', 'show'], { encoding: 'utf8' })
    + execFileSync('ip', ['-4', 'route', 'show'], { encoding: 'utf8' });
  assert.ok(!after.includes(own.tag), `nothing named ${own.tag} is left`);
  assert.ok(!after.includes(own.address(1).replace(/\.\d+$/, '.0/24')), 'the route to its subnet is gone');
});
