# Consumer-group member driver for the interop tests; run with /usr/bin/python3. One process is
# one member; it runs until SIGTERM, then commits, closes (leaving the group) and exits 0. It
# reports on stdout, one event per line, flushed after every poll, and the Node side asserts:
#   assign P,P,...   partitions handed to the member (incremental under cooperative-sticky)
#   revoke P,P,...   partitions taken away (what it consumed is committed by then)
#   lost P,P,...     partitions lost without a revoke (a session timeout)
#   m P O VALUEHEX   one consumed message
#   commit-error E   a commit that failed (E = error name)
#   consume-error E  an error event from poll
#   stopping / closed  SIGTERM seen / consumer closed
# Offsets are committed only by the member, synchronously: never auto-committed.
#
#   confluent BOOTSTRAP GROUP TOPIC STRATEGY [INSTANCE_ID]
#                                              confluent-kafka (librdkafka), commit on revoke;
#                                              with INSTANCE_ID a static member (KIP-345)
#   kafka-python BOOTSTRAP GROUP TOPIC         kafka-python, range assignor, commit after each poll
import signal
import sys

stop = []
signal.signal(signal.SIGTERM, lambda *_: stop.append(True))


def say(line):
    sys.stdout.write(line + '\n')


def plist(partitions):
    return ','.join(str(tp.partition) for tp in sorted(partitions, key=lambda tp: tp.partition))


def report(records):
    for partition, offset, value in records:
        say('m %d %d %s' % (partition, offset, '-' if value is None else value.hex()))
    sys.stdout.flush()


def confluent(bootstrap, group, topic, strategy, instance_id=None):
    from confluent_kafka import Consumer, KafkaException

    config = {
        'bootstrap.servers': bootstrap, 'group.id': group, 'client.id': 'group-client',
        'partition.assignment.strategy': strategy, 'enable.auto.commit': False,
        'auto.offset.reset': 'earliest', 'session.timeout.ms': 6000, 'heartbeat.interval.ms': 500,
        'topic.metadata.refresh.interval.ms': 2000,
    }
    if instance_id is not None:
        config['group.instance.id'] = instance_id
    consumer = Consumer(config)

    def commit(c):
        try:
            c.commit(asynchronous=False)
        except KafkaException as e:
            say('commit-error %s' % e.args[0].name())

    def on_revoke(c, partitions):
        commit(c)
        say('revoke ' + plist(partitions))

    consumer.subscribe([topic], on_assign=lambda _c, ps: say('assign ' + plist(ps)), on_revoke=on_revoke,
                       on_lost=lambda _c, ps: say('lost ' + plist(ps)))
    # poll(), not consume(): librdkafka 2.0.2's batch consume (rd_kafka_consume_batch_queue) can
    # store offsets of messages it never returns when a rebalance lands mid-batch (a known issue
    # listed in its 2.0.0 release notes), which would look like lost messages here.
    while not stop:
        batch = []
        msg = consumer.poll(0.2)
        while msg is not None:
            if msg.error() is not None:
                say('consume-error %s' % msg.error().name())
            else:
                batch.append((msg.partition(), msg.offset(), msg.value()))
            msg = consumer.poll(0) if len(batch) < 1000 else None
        report(batch)
    say('stopping')
    commit(consumer)
    consumer.close()
    say('closed')


def kafka_python(bootstrap, group, topic):
    from kafka import ConsumerRebalanceListener, KafkaConsumer
    from kafka.coordinator.assignors.range import RangePartitionAssignor
    from kafka.errors import KafkaError

    class Listener(ConsumerRebalanceListener):
        def on_partitions_revoked(self, revoked):
            say('revoke ' + plist(revoked))

        def on_partitions_assigned(self, assigned):
            say('assign ' + plist(assigned))

    consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=group, client_id='group-client',
                             enable_auto_commit=False, auto_offset_reset='earliest',
                             partition_assignment_strategy=[RangePartitionAssignor],
                             session_timeout_ms=6000, heartbeat_interval_ms=500, metadata_max_age_ms=2000)
    consumer.subscribe(topics=[topic], listener=Listener())

    def commit():
        try:
            consumer.commit()
        except KafkaError as e:
            say('commit-error %s' % type(e).__name__)

    while not stop:
        batches = consumer.poll(timeout_ms=200)
        report((tp.partition, r.offset, r.value) for tp, records in batches.items() for r in records)
        if batches:
            commit()
    say('stopping')
    commit()
    consumer.close()
    say('closed')


if __name__ == '__main__':
    cmd = sys.argv[1]
    if cmd == 'confluent':
        confluent(*sys.argv[2:7])
    elif cmd == 'kafka-python':
        kafka_python(sys.argv[2], sys.argv[3], sys.argv[4])
    else:
        sys.exit('unknown command ' + cmd)
    sys.stdout.flush()
