# kafka-python 2.0.2 (Debian python3-kafka) driver for the interop tests; run with /usr/bin/python3.
# Messages travel as text lines "partition key value h1k=h1v,h2k=h2v" with key, value and header
# values in hex ('-' = null key, '' = no headers), so the Node side can compare bytes exactly.
# The broker version is always auto-detected (api_version unset) and reported back as JSON.
#
#   produce BOOTSTRAP TOPIC ACKS INFILE           -> {"sent": n, "errors": n, "api_version": [...]}
#   consume BOOTSTRAP TOPIC PARTITIONS COUNT OUTFILE TIMEOUT_S
#                                                 -> {"received": n, "api_version": [...]}
#     consume writes "partition offset key value headers" lines, assign() + seek_to_beginning().
import json
import sys
import time

from kafka import KafkaConsumer, KafkaProducer, TopicPartition


def unhex(s):
    return None if s == '-' else bytes.fromhex(s)


def hexed(b):
    return '-' if b is None else b.hex()


def produce(bootstrap, topic, acks, infile):
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks=(acks if acks == 'all' else int(acks)),
                             linger_ms=5, batch_size=256 * 1024, max_in_flight_requests_per_connection=1,
                             retries=0, request_timeout_ms=30000, max_request_size=4 * 1024 * 1024)
    counts = {'sent': 0, 'errors': 0}

    def failed(_exc):
        counts['errors'] += 1

    with open(infile) as f:
        for line in f:
            part, key, value, headers = line.rstrip('\n').split(' ')
            hdrs = [(k, bytes.fromhex(v)) for k, v in (h.split('=') for h in headers.split(','))] if headers else []
            producer.send(topic, key=unhex(key), value=unhex(value), headers=hdrs, partition=int(part)).add_errback(failed)
            counts['sent'] += 1
    producer.flush(timeout=120)
    version = producer.config['api_version']
    producer.close(timeout=10)
    print(json.dumps({'sent': counts['sent'], 'errors': counts['errors'], 'api_version': list(version)}))


def consume(bootstrap, topic, partitions, count, outfile, timeout_s):
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=None, enable_auto_commit=False,
                             fetch_max_bytes=16 * 1024 * 1024, max_partition_fetch_bytes=4 * 1024 * 1024,
                             max_poll_records=50000)
    tps = [TopicPartition(topic, p) for p in range(partitions)]
    consumer.assign(tps)
    consumer.seek_to_beginning(*tps)
    received = 0
    deadline = time.time() + timeout_s
    with open(outfile, 'w') as out:
        while received < count and time.time() < deadline:
            for tp, records in consumer.poll(timeout_ms=500).items():
                for r in records:
                    headers = ','.join('%s=%s' % (k, v.hex()) for k, v in r.headers)
                    out.write('%d %d %s %s %s\n' % (tp.partition, r.offset, hexed(r.key), hexed(r.value), headers))
                    received += 1
    version = consumer.config['api_version']
    consumer.close()
    print(json.dumps({'received': received, 'api_version': list(version)}))


if __name__ == '__main__':
    cmd = sys.argv[1]
    if cmd == 'produce':
        produce(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5])
    elif cmd == 'consume':
        consume(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), sys.argv[6], float(sys.argv[7]))
    else:
        sys.exit('unknown command ' + cmd)
