// The broker lifecycle against a real pure controller: registration, unfencing only once the
// broker's image has applied its registration (the Kafka listener's gate), registering again
// after the controller fenced it or a new controller forgot it, and a last heartbeat on stop.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BrokerLifecycle } from '../../../src/cluster/broker_lifecycle.js';
import { MetadataImage } from '../../../src/cluster/metadata/image.js';
import { ImageClusterView } from '../../../src/cluster/metadata/image_view.js';
import { MetadataFollower } from '../../../src/cluster/metadata_follower.js';
import { FakeControllerChannel } from '../../helpers/fake_controller.js';

const INTERVAL_MS = 10;
const quiet = { info: () => undefined, warn: () => undefined };

function setup(): { channel: FakeControllerChannel; view: ImageClusterView; lifecycle: BrokerLifecycle } {
  const view = new ImageClusterView('c1', 4, 'PLAINTEXT', MetadataImage.EMPTY);
  const follower = new MetadataFollower(view);
  const channel = new FakeControllerChannel(follower);
  const identity = { brokerId: 4, endpoints: [{ name: 'PLAINTEXT', host: '127.0.0.1', port: 9092, securityProtocol: 0 }], rack: 'r1' };
  return { channel, view, lifecycle: new BrokerLifecycle(identity, channel, follower, { heartbeatIntervalMs: INTERVAL_MS, sessionTimeoutMs: 2000 }, quiet) };
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
