# Reads partition 0 of a topic with librdkafka (confluent_kafka) from offset 0 to `count`, seeks
# back to `seek_to` and reads to the end again; prints "offset" per message. librdkafka's protocol
# debug (which lists the broker's API versions) goes to stderr. Exits 2 when either pass falls
# short within the time limit.
import sys
import time
from confluent_kafka import Consumer, TopicPartition

bootstrap, topic, count, seek_to, seconds = sys.argv[1:6]
count, seek_to = int(count), int(seek_to)
consumer = Consumer({
    'bootstrap.servers': bootstrap,
    'group.id': 'seek-check',
    'enable.auto.commit': False,
    'fetch.wait.max.ms': 100,
    'debug': 'protocol,feature',
})
consumer.assign([TopicPartition(topic, 0, 0)])
deadline = time.time() + float(seconds)


def read_until(last):
    while time.time() < deadline:
        m = consumer.poll(0.5)
        if m is None:
            continue
        if m.error():
            sys.stderr.write('error: %s\n' % m.error())
            continue
        print(m.offset(), flush=True)
        if m.offset() == last:
            return True
    return False


ok = read_until(count - 1)
if ok:
    consumer.seek(TopicPartition(topic, 0, seek_to))
    ok = read_until(count - 1)
consumer.close()
sys.exit(0 if ok else 2)
