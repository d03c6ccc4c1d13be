// Consumer-group members for the rebalance bench (bench process, main thread), each a real Kafka
// client in this process: @platformatic/kafka 1.x with `groupProtocol: 'consumer'` (KIP-848,
// incremental: only the partitions that move are revoked), or kafkajs 2.2.4 on the classic
// protocol with its default round-robin assignor (eager: every member gives up everything at each
// rebalance). Both hand every message to `deliver` with its partition and the send time stamped
// in the first 8 bytes of its value, and say which partitions the client believes it owns.
// Both use the Kafka default fetch.max.wait.ms (500) and otherwise the clients' own defaults
// (heartbeats: the broker's 5 s interval for KIP-848, kafkajs's 3 s for the classic protocol).
// Bounds: close() gives the client at most CLOSE_TIMEOUT_MS, then abandons it.
import { Consumer } from '@platformatic/kafka';
import type { MessagesStream } from '@platformatic/kafka';
import kafkajs from 'kafkajs';

export type GroupClient = 'platformatic-848' | 'kafkajs-eager';

/** Called for every message the member hands to its application. */
export type Deliver = (partition: number, stamp: number) => void;

export interface GroupMember {
  /** The partitions of the bench topic the client currently considers its own. */
  assigned(): readonly number[];
  /** The client's last reported failure (stream error, consumer crash), or null. */
  lastError(): string | null;
  close(): Promise<void>;
}

export interface MemberOptions {
  readonly bootstrap: string;
  readonly groupId: string;
  readonly topic: string;
  readonly clientId: string;
}

const FETCH_MAX_WAIT_MS = 500;
const AUTOCOMMIT_MS = 500;
const CLOSE_TIMEOUT_MS = 10_000;

function stampOf(value: Buffer | null | undefined): number {
  return value !== null && value !== undefined && value.length >= 8 ? value.readDoubleLE(0) : NaN;
}

async function bounded(what: Promise<unknown>): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([what.catch(() => undefined), new Promise((r) => { timer = setTimeout(r, CLOSE_TIMEOUT_MS); })]);
  clearTimeout(timer);
}

async function platformaticMember(o: MemberOptions, deliver: Deliver): Promise<GroupMember> {
  const consumer = new Consumer({
    clientId: o.clientId, bootstrapBrokers: [o.bootstrap], groupId: o.groupId, groupProtocol: 'consumer',
    maxWaitTime: FETCH_MAX_WAIT_MS, autocommit: AUTOCOMMIT_MS, retries: 5, retryDelay: 200,
  });
  let stream: MessagesStream<Buffer, Buffer, Buffer, Buffer>;
  try {
    stream = await consumer.consume({ topics: [o.topic], mode: 'committed', fallbackMode: 'latest' });
  } catch (err) {
    await bounded(new Promise<void>((resolve) => consumer.close(true, () => resolve())));
    throw err;
  }
  let failure: string | null = null;
  stream.on('data', (m) => deliver(m.partition, stampOf(m.value)));
  stream.on('error', (err: Error) => {
    failure = err.message;
  });
  return {
    assigned: () => (consumer.assignments ?? []).find((a) => a.topic === o.topic)?.partitions ?? [],
    lastError: () => failure,
    // A consumer refuses to leave its group while a stream is still consuming.
    close: async () => {
      await bounded(stream.close());
      await bounded(consumer.close());
    },
  };
}

async function kafkajsMember(o: MemberOptions, deliver: Deliver): Promise<GroupMember> {
  const kafka = new kafkajs.Kafka({
    clientId: o.clientId, brokers: [o.bootstrap], logLevel: kafkajs.logLevel.NOTHING,
    retry: { retries: 5, initialRetryTime: 100, maxRetryTime: 1000 },
  });
  const consumer = kafka.consumer({ groupId: o.groupId, maxWaitTimeInMs: FETCH_MAX_WAIT_MS });
  let assigned: readonly number[] = [];
  let failure: string | null = null;
  consumer.on(consumer.events.CRASH, (e) => {
    failure = e.payload.error.message;
  });
  consumer.on(consumer.events.GROUP_JOIN, (e) => {
    assigned = e.payload.memberAssignment[o.topic] ?? [];
  });
  // Eager: a rebalance revokes everything before the member rejoins.
  consumer.on(consumer.events.REBALANCING, () => {
    assigned = [];
  });
  try {
    await consumer.connect();
    await consumer.subscribe({ topics: [o.topic], fromBeginning: false });
    await consumer.run({
      eachMessage: async ({ partition, message }) => {
        deliver(partition, stampOf(message.value));
      },
    });
  } catch (err) {
    await bounded(consumer.disconnect());
    throw err;
  }
  return { assigned: () => assigned, lastError: () => failure, close: () => bounded(consumer.disconnect()) };
}

export function startMember(client: GroupClient, o: MemberOptions, deliver: Deliver): Promise<GroupMember> {
  return client === 'platformatic-848' ? platformaticMember(o, deliver) : kafkajsMember(o, deliver);
}
