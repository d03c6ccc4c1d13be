// The shard heap flag: set to the configured size unless the operator gave node one (in its
// arguments or NODE_OPTIONS, spelled with dashes or underscores); other flags change nothing.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SHARD_INITIAL_OLD_SPACE_MB, shardHeapFlag } from '../../../src/actors/shard_heap.js';

const OURS = `--initial-old-space-size=${SHARD_INITIAL_OLD_SPACE_MB}`;

describe('shardHeapFlag', () => {
  it('sets the initial old space when node was given none', () => {
    assert.equal(shardHeapFlag([], undefined), OURS);
    assert.equal(shardHeapFlag(['--enable-source-maps', '--max-old-space-size=4096'], '--max-old-space-size=2048 --trace-warnings'), OURS);
  });

  it('leaves a size the operator gave node alone', () => {
    assert.equal(shardHeapFlag(['--initial-old-space-size=512'], undefined), null);
    assert.equal(shardHeapFlag(['--initial_old_space_size=512'], undefined), null);
    assert.equal(shardHeapFlag([], ' --trace-warnings  --initial-old-space-size=256'), null);
  });
});
