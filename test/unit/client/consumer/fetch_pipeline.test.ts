// The consumer's per-leader fetch pipelines, against two fake brokers: one leader that never
// answers does not hold back the records of the other's partitions, no leader ever has two
// Fetches outstanding, an answer that arrives during an abandoned poll is kept (positions
// unmoved) and returned by the next poll, and a seek made while a Fetch is in flight discards
// that Fetch's records.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Cluster } from '../../../../src/client/cluster.js';
import { Fetcher } from '../../../../src/client/consumer/fetcher.js';
import type { FetchedBatch } from '../../../../src/client/consumer/types.js';
import { FetchApi } from '../../../../src/protocol/apis/fetch.js';
import type { FetchRequestPartition } from '../../../../src/protocol/apis/fetch.js';
import { encodeRecordBatch } from '../../../../src/protocol/records.js';
import { BatchField } from '../../../../src/protocol/record_batch.js';
import { fetchAnswer, twoBrokers } from '../fake_broker.js';
import type { FakeHandler } from '../fake_broker.js';

/** One record at `offset` whose value names it. */
function recordAt(offset: number): Buffer {
  const batch = encodeRecordBatch([{ key: null, value: Buffer.from(`v${offset}`), timestamp: 1 }]);
  batch.writeBigInt64BE(BigInt(offset), BatchField.baseOffset);
  return batch;
}

/** Answers each partition asked with the record at its fetch offset, or parks it (no answer) when `silent`. */
function serving(asked: FetchRequestPartition[], silent: () => boolean): FakeHandler {
  return (h, r) => {
    const p = FetchApi.decodeRequest(h.apiVersion, r).topics[0]!.partitions[0]!;
    asked.push(p);
    return silent() ? null : fetchAnswer(h, { records: recordAt(p.fetchOffset) }, p.partition);
  };
}

function offsets(batches: readonly FetchedBatch[]): string[] {
  return batches.flatMap((b) => b.messages.map((m) => `${b.partition}@${m.offset}`));
}

describe('fetcher: one pipeline per leader', () => {
  it('returns a fast leader\'s records while another leader has not answered, with at most one Fetch per leader outstanding', { timeout: 20_000 }, async () => {
    const onSlow: FetchRequestPartition[] = [];
    const onFast: FetchRequestPartition[] = [];
    // t-0 and t-2 are led by broker 0, which never answers; t-1 by broker 1, which answers at once.
    const brokers = await twoBrokers([new Map([[FetchApi.key, serving(onSlow, () => true)]]), new Map([[FetchApi.key, serving(onFast, () => false)]])], [0, 1, 0]);
    const client = new Cluster({ brokers: [`127.0.0.1:${brokers.fakes[1].port}`] });
    // A long request timeout: waiting for every leader would not return within the test's timeout.
    const fetcher = new Fetcher(client, { maxWaitMs: 200, minBytes: 1, requestTimeoutMs: 60_000, autoOffsetReset: 'earliest' }, {});
    try {
      await client.topic('t');
      fetcher.add({ topic: 't', partition: 0 }, 0);
      fetcher.add({ topic: 't', partition: 1 }, 0);
      const got = offsets(await fetcher.fetch());
      // Assigned while broker 0 holds a Fetch: it waits for that one's answer.
      fetcher.add({ topic: 't', partition: 2 }, 0);
      for (let i = 0; i < 4; i++) got.push(...offsets(await fetcher.fetch()));
      assert.deepEqual(got, ['1@0', '1@1', '1@2', '1@3', '1@4']);
      assert.equal(onSlow.length, 1, 'one Fetch to the silent leader, never a second beside it');
      assert.equal(brokers.fakes[1].maxOutstanding, 1);
      assert.deepEqual(fetcher.positions(), [{ topic: 't', partition: 0, offset: 0 }, { topic: 't', partition: 1, offset: 5 }, { topic: 't', partition: 2, offset: 0 }]);
    } finally {
      await client.close();
      await brokers.stop();
    }
  });

  it('keeps an answer that arrives during an abandoned poll for the next one, and drops one overtaken by a seek', { timeout: 20_000 }, async () => {
    const asked: FetchRequestPartition[] = [];
    const brokers = await twoBrokers([new Map([[FetchApi.key, serving(asked, () => false)]]), new Map()], [0]);
    const client = new Cluster({ brokers: [`127.0.0.1:${brokers.fakes[0].port}`] });
    const fetcher = new Fetcher(client, { maxWaitMs: 300, minBytes: 1, requestTimeoutMs: 60_000, autoOffsetReset: 'earliest' }, {});
    try {
      await client.topic('t');
      fetcher.add({ topic: 't', partition: 0 }, 0);
      const abort = new AbortController();
      abort.abort();
      assert.deepEqual(await fetcher.fetch(abort.signal), [], 'an abandoned poll returns nothing');
      assert.deepEqual(fetcher.positions(), [{ topic: 't', partition: 0, offset: 0 }], 'and moves no position');
      assert.deepEqual(offsets(await fetcher.fetch()), ['0@0'], 'the answer to its Fetch comes with the next poll');
      // The next Fetch (offset 1) went out as that poll returned: a seek back to 0 makes its answer stale.
      fetcher.seek({ topic: 't', partition: 0 }, 0);
      let got: string[] = [];
      for (let i = 0; i < 3 && got.length === 0; i++) got = offsets(await fetcher.fetch());
      assert.deepEqual(got, ['0@0'], 'records fetched before the seek are dropped, and the partition is fetched again from the sought offset');
      assert.deepEqual(asked.map((p) => p.fetchOffset).slice(0, 3), [0, 1, 0], 'one Fetch at offset 0 before the seek, not two');
    } finally {
      await client.close();
      await brokers.stop();
    }
  });
});
