// The broker lifecycle against a real pure controller: registration, unfencing only once the
// broker's image has applied its registration (the Kafka listener's gate), registering again
// after the controller fenced it or a new controller forgot it but never after an operator
// unregistered it (a new incarnation may), a last heartbeat on stop, and
// controlled shutdown: asking until granted (the other broker applied the move) or the bound.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { BrokerLifecycle, SHUTDOWN_POLL_MS, shutdownWait } from '../../../src/cluster/broker_lifecycle.js';
import { MetadataImage } from '../../../src/cluster/metadata/image.js';
import { ImageClusterView } from '../../../src/cluster/metadata/image_view.js';
import { MetadataFollower } from '../../../src/cluster/metadata_follower.js';
import { FakeControllerChannel, registerBroker } from '../../helpers/fake_controller.js';

const INTERVAL_MS = 10;
const quiet = { info: () => undefined, warn: () => undefined };

function setup(intervalMs = INTERVAL_MS): { channel: FakeControllerChannel; view: ImageClusterView; lifecycle: BrokerLifecycle } {
  const view = new ImageClusterView('c1', 4, 'PLAINTEXT', MetadataImage.EMPTY);
  const follower = new MetadataFollower(view);
  const channel = new FakeControllerChannel(follower);
  const identity = { brokerId: 4, endpoints: [{ name: 'PLAINTEXT', host: '127.0.0.1', port: 9092, securityProtocol: 0 }], rack: 'r1' };
  return { channel, view, lifecycle: new BrokerLifecycle(identity, channel, follower, { heartbeatIntervalMs: intervalMs, sessionTimeoutMs: 2000 }, quiet) };
}

async function until(what: string, holds: () => boolean, ms = 2000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!holds()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

test('registers, is unfenced once caught up, and appears live in its own view with its rack', async () => {
  const { view, lifecycle } = setup();
  lifecycle.start();
  await lifecycle.unfenced();
  assert.equal(lifecycle.state, 'running');
  assert.match(lifecycle.incarnationId, /^[0-9a-f]{32}$/);
  assert.deepEqual(view.brokers(), [{ id: 4, host: '127.0.0.1', port: 9092, rack: 'r1' }]);
  await lifecycle.stop();
});

test('the listener gate stays shut while the image lags behind the registration', async () => {
  const { channel, view, lifecycle } = setup();
  channel.holdBack = true;
  let open = false;
  void lifecycle.unfenced().then(() => (open = true));
  lifecycle.start();
  await new Promise((resolve) => setTimeout(resolve, INTERVAL_MS * 8));
  // Heartbeats carried an applied offset below the registration: the controller keeps it fenced.
  assert.equal(open, false);
  assert.equal(lifecycle.state, 'fenced');
  assert.ok(channel.sent.filter((s) => s.request.kind === 'heartbeat').length >= 2);
  // The registration arrives; the controller unfences on the next heartbeat, but that batch lags here.
  channel.release();
  await until('unfenced on the controller', () => channel.controller.image.brokers.get(4)?.fenced === false);
  await new Promise((resolve) => setTimeout(resolve, INTERVAL_MS * 3));
  assert.equal(open, false);
  assert.deepEqual(view.brokers(), []);
  channel.holdBack = false;
  channel.release();
  await lifecycle.unfenced();
  assert.equal(view.brokers().length, 1);
  await lifecycle.stop();
});

test('fenced by the controller (session expired), it heartbeats its way back to live without a second registration', async () => {
  const { channel, view, lifecycle } = setup();
  lifecycle.start();
  await lifecycle.unfenced();
  const epoch = lifecycle.brokerEpoch;
  channel.expireSessions(60_000);
  assert.deepEqual(view.brokers(), []);
  await until('live again', () => view.brokers().length === 1);
  assert.equal(lifecycle.state, 'running');
  assert.equal(lifecycle.brokerEpoch, epoch);
  assert.equal(channel.sent.filter((s) => s.request.kind === 'registerBroker').length, 1);
  await lifecycle.stop();
});

test('beats at a fixed rate: an attempt that used up its interval unanswered is followed by the next at once', { timeout: 20_000 }, async () => {
  const interval = 300;
  const { channel, lifecycle } = setup(interval);
  lifecycle.start();
  try {
    await lifecycle.unfenced();
    const sentAt: number[] = [];
    const before = channel.sent.length;
    channel.answerDelayMs.set(1, Infinity);
    const watch = setInterval(() => {
      while (before + sentAt.length < channel.sent.length) sentAt.push(performance.now());
    }, 1);
    try {
      await until('six silent attempts', () => sentAt.length >= 6, 10_000);
    } finally {
      clearInterval(watch);
      channel.answerDelayMs.delete(1);
    }
    const gaps = sentAt.slice(1).map((t, i) => t - (sentAt[i] as number)).sort((a, b) => a - b);
    // Waiting an interval after each unanswered one would space them at least two intervals apart.
    assert.ok((gaps[Math.floor(gaps.length / 2)] as number) < 1.5 * interval, `attempts ${gaps.map((g) => g.toFixed(0)).join(', ')} ms apart`);
  } finally {
    channel.answerDelayMs.delete(1);
    await lifecycle.stop();
  }
});

test('a registration taken over by another incarnation (STALE_BROKER_EPOCH) is renewed with this incarnation', async () => {
  const { channel, lifecycle } = setup();
  lifecycle.start();
  await lifecycle.unfenced();
  const first = lifecycle.brokerEpoch;
  await channel.send(1, { kind: 'registerBroker', request: { brokerId: 4, incarnationId: 'c'.repeat(32), endpoints: [{ name: 'PLAINTEXT', host: 'x', port: 1, securityProtocol: 0 }], rack: null } });
  await until('registered again', () => channel.sent.filter((s) => s.request.kind === 'registerBroker' && s.request.request.incarnationId === lifecycle.incarnationId).length === 2);
  await until('running at a new epoch', () => lifecycle.state === 'running' && lifecycle.brokerEpoch > first);
  await lifecycle.stop();
});

test('a new controller that does not know the broker makes it register again', async () => {
  const { channel, lifecycle } = setup();
  lifecycle.start();
  await lifecycle.unfenced();
  const first = lifecycle.brokerEpoch;
  channel.forgetBrokers();
  await until('registered at a new epoch', () => lifecycle.brokerEpoch > first && lifecycle.state === 'running');
  await lifecycle.stop();
});

test('unregistered by an operator, a running broker stops heartbeating and never registers again', async () => {
  const { channel, view, lifecycle } = setup();
  lifecycle.start();
  await lifecycle.unfenced();
  assert.deepEqual(await channel.send(1, { kind: 'unregisterBroker', brokerId: 4 }), { kind: 'unregisterBroker', errorCode: 0 });
  await until('removed', () => lifecycle.state === 'removed');
  const sentThen = channel.sent.length;
  await new Promise((resolve) => setTimeout(resolve, INTERVAL_MS * 10));
  assert.equal(channel.sent.length, sentThen, 'nothing sent after removal');
  assert.equal(channel.sent.filter((s) => s.request.kind === 'registerBroker').length, 1);
  assert.deepEqual(view.brokers(), []);
  assert.equal(await lifecycle.stop(), 'unregistered');
});

test('the same id registers again as a new incarnation after an unregistration', async () => {
  const first = setup();
  first.lifecycle.start();
  await first.lifecycle.unfenced();
  await first.channel.send(1, { kind: 'unregisterBroker', brokerId: 4 });
  await until('removed', () => first.lifecycle.state === 'removed');
  const identity = { brokerId: 4, endpoints: [{ name: 'PLAINTEXT', host: '127.0.0.1', port: 9093, securityProtocol: 0 }], rack: 'r1' };
  const follower = new MetadataFollower(first.view);
  const again = new BrokerLifecycle(identity, first.channel, follower, { heartbeatIntervalMs: INTERVAL_MS, sessionTimeoutMs: 2000 }, quiet);
  again.start();
  await again.unfenced();
  assert.notEqual(again.incarnationId, first.lifecycle.incarnationId);
  assert.deepEqual(first.view.brokers(), [{ id: 4, host: '127.0.0.1', port: 9093, rack: 'r1' }]);
  await again.stop();
});

test('stop sends a last heartbeat asking to shut down, which fences the broker', async () => {
  const { channel, view, lifecycle } = setup();
  lifecycle.start();
  await lifecycle.unfenced();
  await lifecycle.stop();
  const last = channel.sent.at(-1)!.request;
  assert.ok(last.kind === 'heartbeat' && last.request.wantShutDown);
  assert.equal(view.brokers().length, 0);
  assert.equal(lifecycle.state, 'stopped');
});

test('shutdownWait: stops once granted or at the bound, and never waits past the bound', () => {
  assert.equal(shutdownWait(true, 0, 5000, 100), null);
  assert.equal(shutdownWait(false, 5000, 5000, 100), null);
  assert.equal(shutdownWait(false, 0, 0, 100), null);
  assert.equal(shutdownWait(false, 4950, 5000, 100), 50);
  fc.assert(fc.property(fc.boolean(), fc.nat(10_000), fc.nat(10_000), fc.integer({ min: 1, max: 1000 }), (granted, elapsed, timeout, poll) => {
    const wait = shutdownWait(granted, elapsed, timeout, poll);
    if (granted || elapsed >= timeout) return wait === null;
    return wait !== null && wait > 0 && wait <= poll && elapsed + wait <= timeout;
  }));
});

/** Broker 4 running beside broker 1 (registered, unfenced, and heartbeating only when the test says). */
async function besideAnother(): Promise<{ channel: FakeControllerChannel; view: ImageClusterView; lifecycle: BrokerLifecycle; reportApplied: () => Promise<void> }> {
  const s = setup();
  await registerBroker(s.channel);
  const epoch = s.channel.controller.image.brokers.get(1)!.epoch;
  s.lifecycle.start();
  await s.lifecycle.unfenced();
  const reportApplied = async (): Promise<void> => {
    const applied = s.view.image.provenance.endOffset - 1;
    await s.channel.send(1, { kind: 'heartbeat', request: { brokerId: 1, brokerEpoch: epoch, currentMetadataOffset: applied, wantFence: false, wantShutDown: false, warm: true } });
  };
  return { ...s, reportApplied };
}

test('shutDown asks again until the other broker has applied the move, then is granted and fenced', async () => {
  const { channel, view, lifecycle, reportApplied } = await besideAnother();
  const outcome = lifecycle.shutDown(5000);
  await until('marked in controlled shutdown', () => view.image.brokers.get(4)?.inControlledShutdown === true);
  await new Promise((resolve) => setTimeout(resolve, SHUTDOWN_POLL_MS * 2.5));
  // Still unfenced (serving) and still asking: broker 1 has not reported the move.
  assert.equal(view.image.brokers.get(4)!.fenced, false);
  assert.ok(channel.sent.filter((s) => s.request.kind === 'heartbeat' && s.request.request.wantShutDown).length >= 2);
  await reportApplied();
  assert.equal(await outcome, 'granted');
  assert.equal(view.image.brokers.get(4)!.fenced, true);
  assert.equal(lifecycle.state, 'stopped');
  // stop() afterwards adds no request.
  const sent = channel.sent.length;
  assert.equal(await lifecycle.stop(), 'granted');
  assert.equal(channel.sent.length, sent);
});

test('shutDown gives up at its bound when the move is never reported, and stop() asks only once', async () => {
  const waited = await besideAnother();
  const started = performance.now();
  assert.equal(await waited.lifecycle.shutDown(250), 'timed-out');
  const ms = performance.now() - started;
  // Node's timers count whole milliseconds from their own clock reading: one may end a fraction early by performance.now().
  assert.ok(ms >= 248 && ms < 1000, `gave up after ${ms} ms`);
  assert.equal(waited.view.image.brokers.get(4)!.fenced, false);

  const once = await besideAnother();
  const before = once.channel.sent.length;
  assert.equal(await once.lifecycle.stop(), 'timed-out');
  assert.equal(once.channel.sent.filter((s, i) => i >= before && s.request.kind === 'heartbeat').length, 1);
  assert.equal(once.view.image.brokers.get(4)!.inControlledShutdown, true);
});

test('a run of unanswered controller calls is logged once when it starts and once when it ends, not every interval', async (t) => {
  const view = new ImageClusterView('c1', 4, 'PLAINTEXT', MetadataImage.EMPTY);
  const follower = new MetadataFollower(view);
  const channel = new FakeControllerChannel(follower);
  channel.known = -1;
  const lines: { level: string; obj: object; msg: string }[] = [];
  const log = { info: (obj: object, msg: string) => lines.push({ level: 'info', obj, msg }), warn: (obj: object, msg: string) => lines.push({ level: 'warn', obj, msg }) };
  const identity = { brokerId: 4, endpoints: [{ name: 'PLAINTEXT', host: '127.0.0.1', port: 9092, securityProtocol: 0 }], rack: null };
  const lifecycle = new BrokerLifecycle(identity, channel, follower, { heartbeatIntervalMs: INTERVAL_MS, sessionTimeoutMs: 2000 }, log);
  lifecycle.start();
  t.after(() => lifecycle.stop());
  await new Promise((resolve) => setTimeout(resolve, INTERVAL_MS * 8));
  channel.learn(1);
  await lifecycle.unfenced();
  const unanswered = lines.filter((l) => l.msg.startsWith('no answer from the active controller'));
  assert.equal(unanswered.length, 1, 'one line for the whole run');
  assert.deepEqual(unanswered[0]!.obj, { request: 'registerBroker', error: 'REQUEST_TIMED_OUT' });
  const back = lines.find((l) => l.msg === 'the active controller answers again');
  assert.ok(back !== undefined && (back.obj as { failedAttempts: number }).failedAttempts >= 3, JSON.stringify(back));
});
