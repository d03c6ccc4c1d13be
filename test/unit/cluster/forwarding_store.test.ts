// The forwarding metadata store: a topic change goes to the active controller, follows it when
// another node turns out to be active (NOT_CONTROLLER) or is elected while a request is in
// flight, answers only once the broker's own image shows the change, and passes the
// controller's refusals through with their codes; a change waits only as long as the request's
// timeout (capped by the store's), and a timeout <= 0 starts the change without waiting.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ForwardingMetadataStore, MAX_UNAWAITED_CHANGES } from '../../../src/cluster/forwarding_store.js';
import { MetadataImage } from '../../../src/cluster/metadata/image.js';
import { ImageClusterView } from '../../../src/cluster/metadata/image_view.js';
import { MetadataFollower } from '../../../src/cluster/metadata_follower.js';
import { ErrorCode, KafkaError } from '../../../src/protocol/errors.js';
import { FakeControllerChannel, registerBroker } from '../../helpers/fake_controller.js';

function setup(timeoutMs = 2000): { channel: FakeControllerChannel; view: ImageClusterView; store: ForwardingMetadataStore } {
  const view = new ImageClusterView('c1', 1, 'PLAINTEXT', MetadataImage.EMPTY);
  const follower = new MetadataFollower(view);
  const channel = new FakeControllerChannel(follower);
  return { channel, view, store: new ForwardingMetadataStore(channel, follower, view, timeoutMs) };
}

const create = (name: string, partitions = 2) =>
  ({ kind: 'createTopic', name, configs: { 'cleanup.policy': 'compact' }, assignment: Array.from({ length: partitions }, () => [1]) }) as const;

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

const timedOut = (err: unknown): boolean => err instanceof KafkaError && err.code === ErrorCode.REQUEST_TIMED_OUT;

test("a change the controller answers later than the request's timeout fails REQUEST_TIMED_OUT after about that timeout", { timeout: 5_000 }, async () => {
  const { channel, store } = setup(60_000);
  await registerBroker(channel);
  channel.answerDelayMs.set(1, 2_000);
  const started = performance.now();
  await assert.rejects(store.propose(create('slow'), 150), timedOut);
  const took = performance.now() - started;
  assert.ok(took >= 140 && took < 1_000, `answered after ${took.toFixed(0)} ms`);
});

test("a client's timeout longer than the store's is cut to the store's", { timeout: 5_000 }, async () => {
  const { channel, store } = setup(200);
  await registerBroker(channel);
  channel.answerDelayMs.set(1, Infinity);
  const started = performance.now();
  await assert.rejects(store.propose(create('parked'), 3_600_000), timedOut);
  const took = performance.now() - started;
  assert.ok(took < 1_500, `answered after ${took.toFixed(0)} ms`);
});

test('a timeout of 0 starts the change and answers REQUEST_TIMED_OUT at once; the change completes later', { timeout: 5_000 }, async () => {
  const { channel, view, store } = setup(60_000);
  await registerBroker(channel);
  channel.answerDelayMs.set(1, 100);
  const started = performance.now();
  await assert.rejects(store.propose(create('later'), 0), timedOut);
  assert.ok(performance.now() - started < 50, `answered after ${(performance.now() - started).toFixed(0)} ms`);
  assert.equal(view.topic('later'), undefined);
  await new Promise((resolve) => setTimeout(resolve, 300));
  assert.equal(view.topic('later')?.partitions, 2);
  await assert.rejects(store.propose({ kind: 'deleteTopic', name: 'later' }, -1), timedOut);
  await new Promise((resolve) => setTimeout(resolve, 300));
  assert.equal(view.topic('later'), undefined);
});

test('changes started without waiting are bounded: past the bound none is sent until earlier ones end', { timeout: 10_000 }, async () => {
  const { channel, store } = setup(1_000);
  await registerBroker(channel);
  channel.answerDelayMs.set(1, Infinity);
  for (let i = 0; i < MAX_UNAWAITED_CHANGES; i++) await assert.rejects(store.propose(create(`u${i}`), 0), timedOut);
  assert.equal(channel.sent.length, MAX_UNAWAITED_CHANGES);
  await assert.rejects(store.propose(create('over'), 0), (err: unknown) => timedOut(err) && /not changed/.test((err as Error).message));
  assert.equal(channel.sent.length, MAX_UNAWAITED_CHANGES);
  // The silent controller's calls end after the store's own timeout, which frees the bound.
  await new Promise((resolve) => setTimeout(resolve, 1_500));
  await assert.rejects(store.propose(create('again'), 0), (err: unknown) => timedOut(err) && !/not changed/.test((err as Error).message));
  assert.equal(channel.sent.length, MAX_UNAWAITED_CHANGES + 1);
});
