// Test child process: one kafkajs consumer-group member. Prints "<partition> <offset>" for every
// message it processes (stdout), commits as kafkajs does, and leaves the group cleanly on
// SIGTERM; a SIGKILL from the test is the crash case. Args: bootstrap groupId topic.
import { kafkajsClient } from './kafkajs_client.js';

const [bootstrap, groupId, topic] = process.argv.slice(2) as [string, string, string];
const kafka = kafkajsClient(bootstrap, `member-${process.pid}`, 20);
const consumer = kafka.consumer({ groupId, sessionTimeout: 6000, rebalanceTimeout: 10_000, heartbeatInterval: 500, maxWaitTimeInMs: 200 });

let out = '';
const flush = setInterval(() => {
  if (out.length > 0) {
    process.stdout.write(out);
    out = '';
  }
}, 20);

await consumer.connect();
await consumer.subscribe({ topic, fromBeginning: true });
await consumer.run({
  autoCommitInterval: 100,
  eachMessage: async ({ partition, message }) => {
    out += `${partition} ${message.offset}\n`;
  },
});
process.stderr.write('running\n');

process.once('SIGTERM', () => {
  void consumer.disconnect().finally(() => {
    clearInterval(flush);
    process.stdout.write(out, () => process.exit(0));
  });
});
