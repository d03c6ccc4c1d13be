// KafkaAdmin.describeLogDirs against fake brokers: it asks every live broker Metadata lists (or the
// ones named) over a connection of its own, reads sizes and the v4 space fields (null before v4),
// and gives a broker that is down, not live or refusing an error entry instead of failing the call.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { KafkaAdmin } from '../../../src/client/admin.js';
import { DescribeLogDirsApi } from '../../../src/protocol/apis/describe_log_dirs.js';
import type { DescribeLogDirsResponse } from '../../../src/protocol/apis/describe_log_dirs.js';
import { MetadataApi } from '../../../src/protocol/apis/metadata.js';
import type { MetadataResponse } from '../../../src/protocol/apis/metadata.js';
import { ErrorCode } from '../../../src/protocol/errors.js';
import { freePort } from '../../helpers/broker_process.js';
import { FakeBroker, respond, type FakeHandler } from './fake_broker.js';

const NOT_REQUESTED = -2147483648;

function logDirs(dir: string, sizes: readonly [string, number, number][], errorCode = 0): FakeHandler {
  return (h, r) => {
    DescribeLogDirsApi.decodeRequest(h.apiVersion, r);
    const res: DescribeLogDirsResponse = {
      throttleTimeMs: 0, errorCode,
      results: [{
        errorCode: 0, logDir: dir, totalBytes: 10_000, usableBytes: 2_500,
        topics: [...new Set(sizes.map(([t]) => t))].map((name) => ({
          name,
          partitions: sizes.filter(([t]) => t === name).map(([, partitionIndex, partitionSize]) => ({ partitionIndex, partitionSize, offsetLag: 0, isFutureKey: false })),
        })),
      }],
    };
    return respond(DescribeLogDirsApi, h.apiVersion, h.correlationId, res);
  };
}

it('asks each live broker, reads sizes and space, and reports brokers it could not ask as errors', async () => {
  const deadPort = await freePort();
  let ports: number[] = [];
  const metadata: FakeHandler = (h, r) => {
    const req = MetadataApi.decodeRequest(h.apiVersion, r);
    assert.deepEqual(req.topics, [], 'brokers only: no topic list is needed');
    const res: MetadataResponse = {
      throttleTimeMs: 0, clusterId: 'fake', controllerId: 1, clusterAuthorizedOperations: NOT_REQUESTED, topics: [],
      brokers: [{ nodeId: 1, port: ports[0]! }, { nodeId: 2, port: ports[1]! }, { nodeId: 3, port: deadPort }, { nodeId: 4, port: ports[2]! }]
        .map((b) => ({ ...b, host: '127.0.0.1', rack: null })),
    };
    return respond(MetadataApi, h.apiVersion, h.correlationId, res);
  };
  const one = await FakeBroker.start({ handlers: new Map([[MetadataApi.key, metadata], [DescribeLogDirsApi.key, logDirs('/d1', [['t', 0, 100], ['t', 1, 250], ['u', 0, 7]])]]) });
  // Broker 2 speaks DescribeLogDirs only up to v1: no space fields.
  const two = await FakeBroker.start({
    advertise: new Map([[MetadataApi.key, [0, 12]], [DescribeLogDirsApi.key, [0, 1]]]),
    handlers: new Map([[DescribeLogDirsApi.key, logDirs('/d2', [['t', 1, 250]])]]),
  });
  const four = await FakeBroker.start({ handlers: new Map([[DescribeLogDirsApi.key, logDirs('/d4', [], ErrorCode.KAFKA_STORAGE_ERROR)]]) });
  ports = [one.port, two.port, four.port];
  const admin = await KafkaAdmin.connect({ host: '127.0.0.1', port: one.port, requestTimeoutMs: 2000 });
  try {
    const all = await admin.describeLogDirs();
    assert.deepEqual(all.map((b) => [b.broker, b.error === null ? null : b.error.length > 0]), [[1, null], [2, null], [3, true], [4, true]]);
    assert.deepEqual(all[0]!.logDirs, [{
      path: '/d1', error: null, totalBytes: 10_000, usableBytes: 2_500,
      partitions: [
        { topic: 't', partition: 0, sizeBytes: 100, offsetLag: 0 },
        { topic: 't', partition: 1, sizeBytes: 250, offsetLag: 0 },
        { topic: 'u', partition: 0, sizeBytes: 7, offsetLag: 0 },
      ],
    }]);
    assert.deepEqual(all[1]!.logDirs.map((d) => [d.path, d.totalBytes, d.usableBytes, d.partitions.length]), [['/d2', null, null, 1]]);
    assert.equal(all[3]!.error, 'KAFKA_STORAGE_ERROR');
    assert.deepEqual(all[3]!.logDirs, []);

    const named = await admin.describeLogDirs([2, 9, 2]);
    assert.deepEqual(named.map((b) => [b.broker, b.error]), [[2, null], [9, 'BROKER_NOT_AVAILABLE']]);
  } finally {
    await admin.close();
    await Promise.all([one.stop(), two.stop(), four.stop()]);
  }
});
