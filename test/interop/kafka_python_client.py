# kafka-python 2.0.2 (Debian python3-kafka) driver for the interop tests; run with /usr/bin/python3.
# Messages travel as text lines "partition key value h1k=h1v,h2k=h2v" with key, value and header
# values in hex ('-' = null key, '' = no headers), so the Node side can compare bytes exactly.
# The broker version is always auto-detected (api_version unset) and reported back as JSON.
#
#   produce BOOTSTRAP TOPIC ACKS INFILE           -> {"sent": n, "errors": n, "api_version": [...]}
#   consume BOOTSTRAP TOPIC PARTITIONS COUNT OUTFILE TIMEOUT_S
#                                                 -> {"received": n, "api_version": [...]}
#     consume writes "partition offset key value headers" lines, assign() + seek_to_beginning().
#   log-dirs BOOTSTRAP TOPIC                      -> {"brokers": {id: [named, all]}}
#     named and all are lists of [dir, error, [[topic, partition, size, lag, future], ...]]: the
#     answers to TOPIC's partitions 0-63 and to null (every partition the broker holds).
#     DescribeLogDirs v1 sent by kafka-python's admin client to every broker; 2.0.2 has no
#     describe_log_dirs() of its own, so the request and response are declared here with its types.
import json
import sys
import time

from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.protocol.api import Request, Response
from kafka.protocol.types import Array, Boolean, Int16, Int32, Int64, Schema, String


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


class DescribeLogDirsResponse_v1(Response):
    API_KEY = 35
    API_VERSION = 1
    SCHEMA = Schema(
        ('throttle_time_ms', Int32),
        ('log_dirs', Array(
            ('error_code', Int16),
            ('log_dir', String('utf-8')),
            ('topics', Array(
                ('name', String('utf-8')),
                ('partitions', Array(
                    ('partition_index', Int32),
                    ('partition_size', Int64),
                    ('offset_lag', Int64),
                    ('is_future_key', Boolean)))))))
    )


class DescribeLogDirsRequest_v1(Request):
    API_KEY = 35
    API_VERSION = 1
    RESPONSE_TYPE = DescribeLogDirsResponse_v1
    SCHEMA = Schema(
        ('topics', Array(
            ('topic', String('utf-8')),
            ('partitions', Array(Int32))))
    )


def log_dirs(bootstrap, topic):
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=30000)
    brokers = {}
    # Topic and partitions named (only those come back), then null (everything held).
    for topics in ([(topic, list(range(64)))], None):
        for broker in admin._client.cluster.brokers():
            future = admin._send_request_to_node(broker.nodeId, DescribeLogDirsRequest_v1(topics))
            admin._wait_for_futures([future])
            brokers.setdefault(broker.nodeId, []).append([
                [d[1], d[0], [[t[0], p[0], p[1], p[2], p[3]] for t in d[2] for p in t[1]]] for d in future.value.log_dirs
            ])
    admin.close()
    print(json.dumps({'brokers': brokers}))


if __name__ == '__main__':
    cmd = sys.argv[1]
    if cmd == 'produce':
        produce(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5])
    elif cmd == 'consume':
        consume(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), sys.argv[6], float(sys.argv[7]))
    elif cmd == 'log-dirs':
        log_dirs(sys.argv[2], sys.argv[3])
    else:
        sys.exit('unknown command ' + cmd)
