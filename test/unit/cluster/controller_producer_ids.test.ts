// Producer ids from controller blocks: consecutive ids within a block, a new block once one is
// used up, concurrent callers sharing one request, and an unregistered broker refused with a code.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ControllerProducerIds } from '../../../src/cluster/controller_producer_ids.js';
import { PRODUCER_ID_BLOCK } from '../../../src/cluster/metadata/controller.js';
import { MetadataImage } from '../../../src/cluster/metadata/image.js';
import { ImageClusterView } from '../../../src/cluster/metadata/image_view.js';
import { MetadataFollower } from '../../../src/cluster/metadata_follower.js';
import { ErrorCode, KafkaError } from '../../../src/protocol/errors.js';
import { FakeControllerChannel } from '../../helpers/fake_controller.js';

test('ids come from controller blocks, one request per block even under concurrent callers', async () => {
  const follower = new MetadataFollower(new ImageClusterView('c', 1, 'PLAINTEXT', MetadataImage.EMPTY));
  const channel = new FakeControllerChannel(follower);
  const registered = await channel.send(1, { kind: 'registerBroker', request: { brokerId: 1, incarnationId: 'b'.repeat(32), endpoints: [{ name: 'PLAINTEXT', host: 'h', port: 1, securityProtocol: 0 }], rack: null } });
  const registration = { brokerEpoch: -1 };
  const ids = new ControllerProducerIds(1, registration, channel, 1000);
  await assert.rejects(ids.allocate(), (err: unknown) => err instanceof KafkaError && err.code === ErrorCode.COORDINATOR_NOT_AVAILABLE);
  assert.ok(registered.kind === 'registerBroker');
  registration.brokerEpoch = registered.brokerEpoch;
  channel.sent.length = 0;
  const got = await Promise.all(Array.from({ length: PRODUCER_ID_BLOCK + 5 }, () => ids.allocate()));
  assert.deepEqual(got, Array.from({ length: PRODUCER_ID_BLOCK + 5 }, (_, i) => i));
  assert.equal(channel.sent.filter((s) => s.request.kind === 'allocateProducerIds').length, 2);
  assert.equal(follower.image.producerIds.nextProducerId, 2 * PRODUCER_ID_BLOCK);
});
