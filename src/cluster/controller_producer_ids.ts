// Producer ids of a broker in a metadata quorum: blocks handed out by the active controller
// (AllocateProducerIds), each recorded in the metadata log before it is answered, so no two
// brokers and no two incarnations of one broker ever hand out the same id. Callers that arrive
// while a block is on its way wait for that same request. Main thread.
import type { ProducerIdSource } from '../coordinator/producer_ids.js';
import { ErrorCode, KafkaError } from '../protocol/errors.js';
import { callActiveController, type ControllerChannel } from './controller_channel.js';

/** This broker's registration as the block request must name it. */
export interface BrokerRegistrationRef {
  readonly brokerEpoch: number;
}

export class ControllerProducerIds implements ProducerIdSource {
  private next = 0;
  private end = 0;
  private requesting: Promise<void> | null = null;

  constructor(
    private readonly brokerId: number,
    private readonly registration: BrokerRegistrationRef,
    private readonly channel: ControllerChannel,
    private readonly timeoutMs: number,
  ) {}

  async allocate(): Promise<number> {
    while (this.next >= this.end) {
      this.requesting ??= this.requestBlock().finally(() => {
        this.requesting = null;
      });
      await this.requesting;
    }
    return this.next++;
  }

  private async requestBlock(): Promise<void> {
    const epoch = this.registration.brokerEpoch;
    if (epoch === -1) throw new KafkaError(ErrorCode.COORDINATOR_NOT_AVAILABLE, 'this broker is not registered with the controller yet');
    const reply = await callActiveController(this.channel, { kind: 'allocateProducerIds', brokerId: this.brokerId, brokerEpoch: epoch }, this.timeoutMs);
    if (reply.kind !== 'allocateProducerIds') throw new KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR, `the controller answered AllocateProducerIds with ${reply.kind}`);
    if (reply.errorCode !== ErrorCode.NONE) throw new KafkaError(reply.errorCode, 'producer id block refused by the controller');
    this.next = reply.producerIdStart;
    this.end = reply.producerIdStart + reply.producerIdLen;
  }
}
