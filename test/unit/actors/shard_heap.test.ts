// The shard heap flags: each set to the configured size unless the operator gave node that flag
// (in its arguments or NODE_OPTIONS, spelled with dashes or underscores); other flags change nothing.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SHARD_INITIAL_OLD_SPACE_MB, SHARD_MAX_SEMI_SPACE_MB, shardHeapFlags } from '../../../src/actors/shard_heap.js';

const OLD = `--initial-old-space-size=${SHARD_INITIAL_OLD_SPACE_MB}`;
const SEMI = `--max-semi-space-size=${SHARD_MAX_SEMI_SPACE_MB}`;

describe('shardHeapFlags', () => {
  it('sets the initial old space and the largest semi-space when node was given neither', () => {
    assert.deepEqual(shardHeapFlags([], undefined), [OLD, SEMI]);
    assert.deepEqual(shardHeapFlags(['--enable-source-maps', '--max-old-space-size=4096'], '--max-old-space-size=2048 --trace-warnings'), [OLD, SEMI]);
  });

  it('leaves a size the operator gave node alone', () => {
    assert.deepEqual(shardHeapFlags(['--initial-old-space-size=512'], undefined), [SEMI]);
    assert.deepEqual(shardHeapFlags(['--initial_old_space_size=512'], undefined), [SEMI]);
    assert.deepEqual(shardHeapFlags([], ' --trace-warnings  --initial-old-space-size=256'), [SEMI]);
    assert.deepEqual(shardHeapFlags(['--max_semi_space_size=32'], undefined), [OLD]);
    assert.deepEqual(shardHeapFlags(['--max-semi-space-size=16'], '--initial-old-space-size=128'), []);
  });
});
