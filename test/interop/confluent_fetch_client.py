# Reads every partition of a topic from offset 0 with librdkafka (confluent_kafka) under the
# fetch size settings given on the command line, and prints "partition offset" per message.
# Exits 2 when the expected count is not reached within the time limit.
import sys
import time
from confluent_kafka import Consumer, TopicPartition

bootstrap, topic, partitions, expected, fetch_max, receive_max, seconds = sys.argv[1:8]
consumer = Consumer({
    'bootstrap.servers': bootstrap,
    'group.id': 'fetch-limits',
    'enable.auto.commit': False,
    'fetch.max.bytes': int(fetch_max),
    'max.partition.fetch.bytes': int(fetch_max),
    'receive.message.max.bytes': int(receive_max),
    'fetch.wait.max.ms': 200,
})
consumer.assign([TopicPartition(topic, p, 0) for p in range(int(partitions))])
seen = 0
deadline = time.time() + float(seconds)
while seen < int(expected) and time.time() < deadline:
    m = consumer.poll(0.5)
    if m is None:
        continue
    if m.error():
        sys.stderr.write('error: %s\n' % m.error())
        continue
    print(m.partition(), m.offset(), flush=True)
    seen += 1
consumer.close()
sys.exit(0 if seen >= int(expected) else 2)
