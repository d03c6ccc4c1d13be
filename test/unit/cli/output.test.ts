// The shared CLI renderer: every --format gives the same data (json and yaml parse to the same
// value), text and wide come from the verb's tables, and an unknown format is a usage error.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { load } from 'js-yaml';
import { UsageError, parseArgs } from '../../../src/cli/args.js';
import { formatOption, renderer, streamItem } from '../../../src/cli/output.js';

const value = { name: 't', partitions: 3, id: null, nested: [{ a: 'x: y', b: true }], skipped: undefined };
const text = (wide: boolean): string => (wide ? 'NAME ID' : 'NAME');

test('json and yaml carry the same data; text and wide come from the tables', () => {
  const expected = JSON.parse(JSON.stringify(value)) as unknown;
  assert.deepEqual(JSON.parse(renderer('json')(value, text)), expected);
  assert.deepEqual(load(renderer('yaml')(value, text)), expected);
  assert.equal(renderer('text')(value, text), 'NAME');
  assert.equal(renderer('wide')(value, text), 'NAME ID');
  assert.equal(renderer('wide')(value, 'plain'), 'plain');
});

test('stream items: one JSON line each, or one YAML document each', () => {
  const line = streamItem('json', value);
  assert.ok(!line.includes('\n'));
  assert.deepEqual(JSON.parse(line), JSON.parse(JSON.stringify(value)));
  const doc = streamItem('yaml', value);
  assert.match(doc, /^---\n/);
  assert.deepEqual(load(doc), JSON.parse(JSON.stringify(value)));
});

test('--format takes text, wide, json and yaml only', () => {
  const spec = [{ name: 'format' }];
  for (const f of ['text', 'wide', 'json', 'yaml']) assert.equal(formatOption(parseArgs(['--format', f], spec, false)), f);
  assert.equal(formatOption(parseArgs([], spec, false)), 'text');
  assert.throws(() => formatOption(parseArgs(['--format', 'xml'], spec, false)), UsageError);
});
