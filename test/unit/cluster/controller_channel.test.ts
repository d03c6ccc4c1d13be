// callActiveController watches, while a request is in flight, for the quorum naming another
// controller. Once the answer is in the watch must end with its timer cleared: a local controller
// answers at once, and a watch timer left armed woke an idle single node's main thread once per
// heartbeat for nothing (issue 16).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { callActiveController, type ControllerChannel, type ControllerRequest } from '../../../src/cluster/controller_channel.js';
import type { ControllerReply } from '../../../src/cluster/metadata/controller.js';
import { ErrorCode, KafkaError } from '../../../src/protocol/errors.js';

/** A channel to controller 1 whose answers take `answerMs`, and whose change waits are counted while armed. */
class CountingChannel implements ControllerChannel {
  active = 1;
  readonly armed = new Set<NodeJS.Timeout>();
  private readonly changes = new Set<() => void>();

  constructor(private readonly answerMs: number) {}

  activeController(): number {
    return this.active;
  }

  controllerChange(ms: number, until?: Promise<unknown>): Promise<void> {
    return new Promise((resolve) => {
      const wake = (): void => {
        clearTimeout(timer);
        this.armed.delete(timer);
        this.changes.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      this.armed.add(timer);
      this.changes.add(wake);
      until?.then(wake, wake);
    });
  }

  /** The quorum names `id` active. */
  elect(id: number): void {
    this.active = id;
    for (const wake of [...this.changes]) wake();
  }

  readonly sentTo: number[] = [];

  send(id: number, _request: ControllerRequest, timeoutMs: number): Promise<ControllerReply> {
    this.sentTo.push(id);
    const reply: ControllerReply = { kind: 'heartbeat', errorCode: ErrorCode.NONE, isCaughtUp: true, isFenced: false, shouldShutDown: false };
    // As the real channel: a controller silent past timeoutMs is REQUEST_TIMED_OUT.
    if (this.answerMs > timeoutMs) {
      return new Promise((_resolve, reject) => setTimeout(() => reject(new KafkaError(ErrorCode.REQUEST_TIMED_OUT, 'silent')), timeoutMs));
    }
    return new Promise((resolve) => setTimeout(() => resolve(reply), this.answerMs));
  }
}

const HEARTBEAT: ControllerRequest = { kind: 'heartbeat', request: { brokerId: 1, brokerEpoch: 1, currentMetadataOffset: 0, wantFence: false, wantShutDown: false, warm: true } };

describe('callActiveController', () => {
  it('leaves no watch timer armed once the controller has answered', async () => {
    const channel = new CountingChannel(0);
    const reply = await callActiveController(channel, HEARTBEAT, 500);
    assert.equal(reply.kind === 'heartbeat' && reply.errorCode, ErrorCode.NONE);
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(channel.armed.size, 0, 'the in-flight watch still holds a timer');
  });

  it('still gives up on a controller the quorum replaced while the request was in flight', async () => {
    const channel = new CountingChannel(10_000);
    const call = callActiveController(channel, HEARTBEAT, 300);
    setTimeout(() => channel.elect(2), 20);
    // Node 1 is abandoned once node 2 is named; node 2 is silent too, so the call ends by its own 300 ms deadline.
    const started = performance.now();
    await assert.rejects(call);
    assert.ok(performance.now() - started < 1_000, 'not held for the first controller\'s 10 s answer');
    assert.deepEqual(channel.sentTo, [1, 2]);
  });
});
