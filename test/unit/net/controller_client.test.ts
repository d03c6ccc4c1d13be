// The broker's controller client against a fake controller: a request past its deadline fails
// alone and the connection stays (its late answer is read and dropped, the next request is
// answered on the same connection), because the controller fences a broker soon after its
// connection closes; only SILENT_TIMEOUTS missed deadlines without any answer drop it.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ControllerClient, SILENT_TIMEOUTS } from '../../../src/net/controller_client.js';
import { PLAINTEXT_PEER } from '../../../src/common/peer_socket.js';
import { BrokerHeartbeatApi } from '../../../src/protocol/apis/broker_heartbeat.js';
import { ErrorCode, KafkaError } from '../../../src/protocol/errors.js';
import { FakeBroker, respond } from '../client/fake_broker.js';
import type { FakeHandler } from '../client/fake_broker.js';

const heartbeat = { kind: 'heartbeat', request: { brokerId: 1, brokerEpoch: 7, currentMetadataOffset: 3, wantFence: false, wantShutDown: false, warm: true } } as const;

function answering(fenced: () => boolean): FakeHandler {
  return (h, r) => {
    BrokerHeartbeatApi.decodeRequest(h.apiVersion, r);
    return respond(BrokerHeartbeatApi, h.apiVersion, h.correlationId, { throttleTimeMs: 0, errorCode: 0, isCaughtUp: true, isFenced: fenced(), shouldShutDown: false });
  };
}

function timedOut(err: unknown): boolean {
  return err instanceof KafkaError && err.code === ErrorCode.REQUEST_TIMED_OUT;
}

describe('controller client deadlines', () => {
  it('a late answer fails only its own request; the connection stays and answers the next one', async () => {
    let answers = 0;
    const controller = await FakeBroker.start({ handlers: new Map([[BrokerHeartbeatApi.key, answering(() => ++answers === 1)]]), answerDelayMs: 200 });
    const client = new ControllerClient([{ id: 0, host: '127.0.0.1', port: controller.port }], 'c', PLAINTEXT_PEER, () => {});
    try {
      await assert.rejects(client.send(0, heartbeat, 20), timedOut);
      const reply = await client.send(0, heartbeat, 5_000);
      assert.deepEqual(reply, { kind: 'heartbeat', errorCode: ErrorCode.NONE, isCaughtUp: true, isFenced: false, shouldShutDown: false }, 'the second answer, not the late first one');
      assert.equal(controller.accepted, 1, 'one connection throughout');
    } finally {
      client.close();
      await controller.stop();
    }
  });

  it(`drops a connection only after ${SILENT_TIMEOUTS} missed deadlines without an answer`, async () => {
    const controller = await FakeBroker.start({ handlers: new Map([[BrokerHeartbeatApi.key, () => null]]) });
    const client = new ControllerClient([{ id: 0, host: '127.0.0.1', port: controller.port }], 'c', PLAINTEXT_PEER, () => {});
    try {
      for (let i = 1; i < SILENT_TIMEOUTS; i++) await assert.rejects(client.send(0, heartbeat, 20), timedOut);
      assert.equal(controller.accepted, 1, `kept through ${SILENT_TIMEOUTS - 1} missed deadlines`);
      await assert.rejects(client.send(0, heartbeat, 20), timedOut);
      await assert.rejects(client.send(0, heartbeat, 20), timedOut);
      assert.equal(controller.accepted, 2, 'a fresh connection after the silent ones');
    } finally {
      client.close();
      await controller.stop();
    }
  });
});
