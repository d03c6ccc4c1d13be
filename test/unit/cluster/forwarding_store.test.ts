// The forwarding metadata store: a topic change goes to the active controller, follows it when
// another node turns out to be active (NOT_CONTROLLER) or is elected while a request is in
// flight, answers only once the broker's own image shows the change, and passes the
// controller's refusals through with their codes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ForwardingMetadataStore } from '../../../src/cluster/forwarding_store.js';
import { MetadataImage } from '../../../src/cluster/metadata/image.js';
import { ImageClusterView } from '../../../src/cluster/metadata/image_view.js';
import { MetadataFollower } from '../../../src/cluster/metadata_follower.js';
import { ErrorCode, KafkaError } from '../../../src/protocol/errors.js';
import { FakeControllerChannel } from '../../helpers/fake_controller.js';

function setup(timeoutMs = 2000): { channel: FakeControllerChannel; view: ImageClusterView; store: ForwardingMetadataStore } {
  const view = new ImageClusterView('c1', 1, 'PLAINTEXT', MetadataImage.EMPTY);
  const follower = new MetadataFollower(view);
  const channel = new FakeControllerChannel(follower);
  return { channel, view, store: new ForwardingMetadataStore(channel, follower, view, timeoutMs) };
}

const create = (name: string, partitions = 2) =>
  ({ kind: 'createTopic', name, configs: { 'cleanup.policy': 'compact' }, assignment: Array.from({ length: partitions }, () => [1]) }) as const;

/** Broker 1 registered and unfenced, so replicas may be placed on it. */
async function registerBroker(channel: FakeControllerChannel): Promise<void> {
  const registered = await channel.send(1, { kind: 'registerBroker', request: { brokerId: 1, incarnationId: 'a'.repeat(32), endpoints: [{ name: 'PLAINTEXT', host: 'h', port: 1, securityProtocol: 0 }], rack: null } });
  assert.ok(registered.kind === 'registerBroker');
  const epoch = registered.brokerEpoch;
  await channel.send(1, { kind: 'heartbeat', request: { brokerId: 1, brokerEpoch: epoch, currentMetadataOffset: epoch, wantFence: false, wantShutDown: false } });
  channel.sent.length = 0;
}

test('a change sent to a node that is no longer the controller follows the new one and answers from the local image', async () => {
  const { channel, view, store } = setup();
  await registerBroker(channel);
  channel.actual = 2;
  const done = store.propose(create('t'));
  setTimeout(() => channel.learn(2), 20);
  const committed = await done;
  assert.deepEqual(channel.sent.map((s) => s.id), [1, 2]);
  assert.equal(committed.topic.name, 't');
  assert.equal(committed.topic.partitions, 2);
  assert.deepEqual(committed.topic.configs, { 'cleanup.policy': 'compact' });
  assert.equal(view.topic('t')?.id, committed.topic.id);
  assert.equal(committed.revision, view.revision);
  assert.deepEqual(view.partition('t', 1)?.replicas, [1]);
});

test('a change in flight to a controller that fell silent goes to the one elected next, long before its timeout', { timeout: 5_000 }, async () => {
  const { channel, store } = setup(60_000);
  await registerBroker(channel);
  channel.answerDelayMs.set(1, Infinity);
  channel.actual = 2;
  const started = performance.now();
  const done = store.propose(create('t'));
  setTimeout(() => channel.learn(-1), 20);
  setTimeout(() => channel.learn(2), 300);
  const committed = await done;
  assert.equal(committed.topic.name, 't');
  assert.deepEqual(channel.sent.map((s) => s.id), [1, 2], 'no second send while the quorum named no controller');
  assert.ok(performance.now() - started < 2_000, `answered after ${(performance.now() - started).toFixed(0)} ms`);
});

test('while the quorum names no controller, the change in flight still takes the old one\'s late answer', { timeout: 5_000 }, async () => {
  const { channel, store } = setup(60_000);
  await registerBroker(channel);
  channel.answerDelayMs.set(1, 200);
  const done = store.propose(create('t'));
  setTimeout(() => channel.learn(-1), 20);
  assert.equal((await done).topic.name, 't');
  assert.deepEqual(channel.sent.map((s) => s.id), [1]);
});

test('the answer waits until the local image has applied the committed batch', async () => {
  const { channel, view, store } = setup();
  await registerBroker(channel);
  channel.holdBack = true;
  let answered = false;
  const done = store.propose(create('late')).then((c) => {
    answered = true;
    return c;
  });
  await new Promise((resolve) => setTimeout(resolve, 30));
  assert.equal(answered, false);
  assert.equal(view.topic('late'), undefined);
  channel.release();
  assert.equal((await done).topic.name, 'late');
});

test('without any active controller within the timeout the change fails NOT_CONTROLLER', async () => {
  const { channel, store } = setup(150);
  channel.actual = 3;
  await assert.rejects(store.propose(create('t')), (err: unknown) => err instanceof KafkaError && err.code === ErrorCode.NOT_CONTROLLER);
  assert.ok(channel.sent.length >= 2, 'retried within the timeout');
});

test('the controller refusing a change is the answer, not retried', async () => {
  const { channel, store } = setup();
  await registerBroker(channel);
  await store.propose(create('dup'));
  const before = channel.sent.length;
  await assert.rejects(store.propose(create('dup')), (err: unknown) => err instanceof KafkaError && err.code === ErrorCode.TOPIC_ALREADY_EXISTS);
  assert.equal(channel.sent.length, before + 1);
});

test('partitions grow and topics go through the controller too', async () => {
  const { channel, view, store } = setup();
  await registerBroker(channel);
  await store.propose(create('g', 1));
  const grown = await store.propose({ kind: 'createPartitions', name: 'g', assignment: [[1], [1]] });
  assert.equal(grown.topic.partitions, 3);
  assert.equal(view.topic('g')?.partitions, 3);
  const deleted = await store.propose({ kind: 'deleteTopic', name: 'g' });
  assert.equal(deleted.topic.partitions, 3);
  assert.equal(view.topic('g'), undefined);
  await assert.rejects(store.propose({ kind: 'deleteTopic', name: 'g' }), (err: unknown) => err instanceof KafkaError && err.code === ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
});
