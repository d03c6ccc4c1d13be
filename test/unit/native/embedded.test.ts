// The single executable's embedded lookups (src/native/embedded.ts) outside the executable, and
// the name of its versioned addon cache directory.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { embeddedBuild, embeddedNativePath, embeddedText, runsEmbedded, versionDir } from '../../../src/native/embedded.js';

const A = 'a'.repeat(64);
const B = 'b'.repeat(64);

describe('versionDir', () => {
  it('is the version and a 16-hex digest, the same for the same build', () => {
    const dir = versionDir({ version: '0.1.0', commit: 'x', natives: { 'one.node': A, 'two.node': B } });
    assert.match(dir, /^0\.1\.0-[0-9a-f]{16}$/);
    assert.equal(versionDir({ version: '0.1.0', commit: 'y', natives: { 'two.node': B, 'one.node': A } }), dir);
  });

  it('changes when any addon changes, whichever it is, and with the version', () => {
    const base = { version: '0.1.0', commit: 'x', natives: { 'one.node': A, 'two.node': B } };
    const dirs = new Set([
      versionDir(base),
      versionDir({ ...base, natives: { 'one.node': B, 'two.node': B } }),
      versionDir({ ...base, natives: { 'one.node': A, 'two.node': A } }),
      versionDir({ ...base, natives: { 'one.node': A } }),
      versionDir({ ...base, version: '0.1.1' }),
    ]);
    assert.equal(dirs.size, 5);
  });
});

describe('outside the single executable', () => {
  it('answers that nothing is embedded, so callers use the source tree', () => {
    assert.equal(runsEmbedded(), false);
    assert.equal(embeddedText('shard_main.js'), null);
    assert.equal(embeddedBuild(), null);
    assert.equal(embeddedNativePath('sluice_native.node'), null);
  });
});
