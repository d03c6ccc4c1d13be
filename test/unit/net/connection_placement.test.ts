// Main's record of a placed connection (PlacedConnection) serving the requests its shard forwards:
// while a shard port a forwarded request fed is blocked (its ring full), the connection's next
// forwarded requests wait on main, in order, and run once the port drains, rather than crowding
// the port's bounded overflow queue, which would refuse them.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MessageChannel } from 'node:worker_threads';
import pino from 'pino';
import type { ConnectionServices } from '../../../src/net/connection.js';
import { PlacedConnection } from '../../../src/net/connection_placement.js';
import { NO_RESPONSE, type BoundHandler, type HandlerResult } from '../../../src/net/handler.js';
import type { PlacementToShard } from '../../../src/net/placement_messages.js';
import { ProduceApi, type ProduceRequest } from '../../../src/protocol/apis/produce.js';
import { requestFrame } from '../../helpers/raw_socket.js';

const PRODUCE: ProduceRequest = { transactionalId: null, acks: 1, timeoutMs: 1000, topicData: [] };

/** A port that stays blocked until `unblock()`. */
class BlockedPort {
  blocked = true;
  private waiters: Array<() => void> = [];

  whenUnblocked(): Promise<void> {
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  unblock(): void {
    this.blocked = false;
    for (const w of this.waiters) w();
    this.waiters = [];
  }
}

describe('PlacedConnection', () => {
  it('holds the next forwarded requests while a shard port the last one fed is blocked, then runs them in order', { timeout: 10_000 }, async (t) => {
    const port = new BlockedPort();
    const handled: number[] = [];
    const pending: Array<(r: HandlerResult<unknown>) => void> = [];
    const produce: BoundHandler = {
      api: ProduceApi as BoundHandler['api'],
      barrier: false,
      handle: (ctx) => {
        handled.push(ctx.header.correlationId);
        return new Promise((resolve) => pending.push(resolve));
      },
    };
    const services: ConnectionServices = {
      handlers: new Map([[ProduceApi.key, produce]]),
      metrics: { protocolError: () => undefined, recordRequest: () => undefined, addSocketBytesIn: () => undefined, addSocketBytesOut: () => undefined },
      releaseLeases: () => undefined,
      blockedShards: () => (port.blocked ? [port] : []),
    };
    const channel = new MessageChannel();
    t.after(() => channel.port1.close());
    const answers: number[] = [];
    channel.port2.on('message', (m: PlacementToShard) => {
      if (m.kind === 'answer') answers.push(m.seq);
    });
    const placed = new PlacedConnection(1, 0, channel.port1, '127.0.0.1', services, pino({ level: 'silent' }), null, () => undefined, () => 0);
    for (let seq = 0; seq < 3; seq++) placed.receive(seq, requestFrame(ProduceApi, 9, seq + 1, PRODUCE).subarray(4), undefined);

    assert.deepEqual(handled, [1], 'the first ran; the port it fed is blocked, so the others wait');
    port.unblock();
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(handled, [1, 2, 3], 'they run once it drains, in order');
    for (const resolve of pending) resolve(NO_RESPONSE);
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.deepEqual(answers, [0, 1, 2]);
    placed.closedOnShard();
  });
});
