// The CLI's failure messages: each keeps the Kafka error name first (scripts match on it) and
// adds the cause and the fix where there is one; connection failures name the address.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConnectionError } from '../../../src/client/connection.js';
import { brokerError } from '../../../src/client/broker_errors.js';
import { ErrorCode, KafkaError } from '../../../src/protocol/errors.js';
import { UsageError } from '../../../src/cli/args.js';
import { describeFailure } from '../../../src/cli/errors.js';

test('no broker at an address: is sluice start running, and where to set the address', () => {
  const f = describeFailure(new ConnectionError('cannot connect to 127.0.0.1:9092: connect ECONNREFUSED 127.0.0.1:9092'));
  assert.deepEqual(f, { message: 'no broker at 127.0.0.1:9092: is `sluice start` running? (set --brokers HOST:PORT)', exitCode: 1 });
  assert.match(describeFailure(new ConnectionError('cannot connect to x.invalid:9092: getaddrinfo ENOTFOUND x.invalid'))?.message ?? '', /cannot resolve x\.invalid:9092/);
});

test('an unknown topic names the create command; the error name stays first', () => {
  const f = describeFailure(brokerError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, 'topic orders', null));
  assert.equal(f?.exitCode, 1);
  assert.equal(f?.message, 'UNKNOWN_TOPIC_OR_PARTITION (topic orders); topic "orders" does not exist: create it with `sluice topic create orders`');
  const g = describeFailure(new KafkaError(ErrorCode.GROUP_ID_NOT_FOUND, 'GROUP_ID_NOT_FOUND: group g1 does not exist'));
  assert.match(g?.message ?? '', /^GROUP_ID_NOT_FOUND: group g1 does not exist; `sluice group list` shows the groups$/);
});

test('usage errors exit 2 and point at --help; other errors without a hint keep their text; bugs are not described', () => {
  assert.deepEqual(describeFailure(new UsageError('bad')), { message: "bad\nRun 'sluice --help' for usage.", exitCode: 2 });
  assert.equal(describeFailure(new KafkaError(ErrorCode.POLICY_VIOLATION, 'no'))?.message, 'POLICY_VIOLATION: no');
  assert.equal(describeFailure(new TypeError('x')), null);
});
