// The rpk-grade verbs of the `sluice` binary against a broker process: produce -> consume round
// trips with keys, headers and JSON lines; the --offset grammar against records with known
// timestamps; group consumption committing offsets (seen by `group describe`); alter-config then
// describe --configs; --format json and yaml parsing over every read verb; and kcat (librdkafka)
// reading what `sluice produce` wrote and the other way round.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { load } from 'js-yaml';
import { BROKER_MAIN, BrokerProcess } from '../helpers/broker_process.js';
import { run } from '../helpers/child.js';
import { kcat } from '../helpers/kcat.js';

let broker: BrokerProcess;
let brokers: string[];

interface Run { code: number | null; stdout: string; stderr: string }

async function sluice(args: readonly string[], input?: string): Promise<Run> {
  const r = await run(process.execPath, [BROKER_MAIN, ...args, ...brokers], { timeoutMs: 60_000, ...(input === undefined ? {} : { input: Buffer.from(input) }) });
  return { code: r.code, stdout: r.stdout.toString('utf8'), stderr: r.stderr };
}

async function ok(args: readonly string[], input?: string): Promise<string> {
  const r = await sluice(args, input);
  assert.equal(r.code, 0, `sluice ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

interface View { topic: string; partition: number; offset: number; timestamp: number; encoding: string; key: string | null; value: string | null; headers: { key: string; value: string | null }[] }
const lines = (out: string): View[] => out.trim().split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as View);

before(async () => {
  broker = await BrokerProcess.start();
  brokers = ['--brokers', broker.bootstrap];
});

after(async () => {
  await broker.dispose();
});

describe('sluice produce and consume', () => {
  it('round-trips keys, headers and JSON lines, and prints partition@offset', async () => {
    await ok(['topic', 'create', 'rt', '--partitions', '1']);
    const acks = await ok(['produce', 'rt', '--key-separator', ':', '--header', 'h=1', '--header', 'h=2'], 'k1:v1\nk2:v:2\n');
    assert.deepEqual(acks.trim().split('\n'), ['0@0', '0@1']);
    const json = await ok(['produce', 'rt', '--format', 'json'], '{"key":"j","value":"{\\"x\\":1}","headers":{"a":"b"}}\n\n{"value":null}\n');
    assert.deepEqual(lines(json).map((a) => a.offset), [2, 3]);
    await ok(['produce', 'rt', '--value', 'solo', '--key', 'sk', '--acks', '1']);
    const got = lines(await ok(['consume', 'rt', '--until-end', '--format', 'json']));
    assert.deepEqual(got.map((r) => [r.offset, r.key, r.value, r.encoding]), [
      [0, 'k1', 'v1', 'utf8'], [1, 'k2', 'v:2', 'utf8'], [2, 'j', '{"x":1}', 'utf8'], [3, null, null, 'utf8'], [4, 'sk', 'solo', 'utf8'],
    ]);
    assert.deepEqual(got[0]?.headers, [{ key: 'h', value: '1' }, { key: 'h', value: '2' }]);
    assert.deepEqual(got[2]?.headers, [{ key: 'a', value: 'b' }]);
    assert.equal(await ok(['consume', 'rt', '--num', '2']), 'v1\nv:2\n');
    const yaml = load((await ok(['consume', 'rt', '--offset', '-1', '--until-end', '--format', 'yaml'])).replace(/^---\n/, '')) as View;
    assert.equal(yaml.value, 'solo');
  });

  it('bad input is a clear error: unknown topic, bad JSON line, bad --offset', async () => {
    const missing = await sluice(['consume', 'nope', '--until-end']);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /UNKNOWN_TOPIC_OR_PARTITION.*topic "nope" does not exist: create it with `sluice topic create nope`/);
    const badJson = await sluice(['produce', 'rt', '--format', 'json'], 'not json\n');
    assert.equal(badJson.code, 2);
    assert.match(badJson.stderr, /line 1: not JSON/);
    const badOffset = await sluice(['consume', 'rt', '--offset', 'yesterday']);
    assert.equal(badOffset.code, 2);
    assert.match(badOffset.stderr, /expected start, end, N, \+N, -N/);
  });

  it('the offset grammar: +N from the start, -N from the end, @timestamp, @-duration', async () => {
    await ok(['topic', 'create', 'ts', '--partitions', '1']);
    const t0 = Date.now() - 10 * 60_000;
    const input = [0, 1, 2, 3, 4].map((i) => JSON.stringify({ value: `r${i}` })).join('\n');
    await ok(['produce', 'ts', '--format', 'json'], `${input}\n`);
    const values = async (offset: string): Promise<(string | null)[]> => lines(await ok(['consume', 'ts', '--offset', offset, '--until-end', '--format', 'json'])).map((r) => r.value);
    assert.deepEqual(await values('start'), ['r0', 'r1', 'r2', 'r3', 'r4']);
    assert.deepEqual(await values('+3'), ['r3', 'r4']);
    assert.deepEqual(await values('-2'), ['r3', 'r4']);
    assert.deepEqual(await values('1'), ['r1', 'r2', 'r3', 'r4']);
    assert.deepEqual(await values('end'), []);
    assert.deepEqual(await values(`@${t0}`), ['r0', 'r1', 'r2', 'r3', 'r4']);
    assert.deepEqual(await values('@-10m'), ['r0', 'r1', 'r2', 'r3', 'r4']);
    const all = lines(await ok(['consume', 'ts', '--until-end', '--format', 'json']));
    const third = all[2] as View;
    const fromThird = lines(await ok(['consume', 'ts', '--offset', `@${new Date(third.timestamp).toISOString()}`, '--until-end', '--format', 'json']));
    // ListOffsets by time answers the first offset whose timestamp is at least the one asked, so
    // records sharing the third one's millisecond (one produce often stamps several) come too.
    const firstAtOrAfter = all.findIndex((r) => r.timestamp >= third.timestamp);
    assert.deepEqual(fromThird.map((r) => r.offset), all.slice(firstAtOrAfter).map((r) => r.offset));
    assert.ok(firstAtOrAfter <= 2);
  });

  it('--group consumes as a member and commits what it printed', async () => {
    await ok(['topic', 'create', 'grp', '--partitions', '2']);
    await ok(['produce', 'grp', '--key-separator', '='], 'a=1\nb=2\nc=3\nd=4\n');
    assert.equal((await ok(['consume', 'grp', '--group', 'cli-g', '--until-end'])).trim().split('\n').length, 4);
    const report = JSON.parse(await ok(['group', 'describe', 'cli-g', '--format', 'json'])) as { partitions: { partition: number; committedOffset: number; logEndOffset: number; lag: number }[] };
    assert.equal(report.partitions.reduce((s, p) => s + p.committedOffset, 0), 4);
    assert.ok(report.partitions.every((p) => p.lag === 0), JSON.stringify(report));
    // Committed: a second run from the group's offsets finds nothing new.
    assert.equal(await ok(['consume', 'grp', '--group', 'cli-g', '--until-end']), '');
  });
});

describe('sluice topic alter-config and describe --configs', () => {
  it('sets, shows as not default, deletes back to the default', async () => {
    await ok(['topic', 'create', 'cfg']);
    await ok(['topic', 'alter-config', 'cfg', '--set', 'retention.ms=3600000']);
    type Entry = { name: string; value: string | null; source: string; isDefault: boolean };
    const show = async (): Promise<Entry | undefined> => (JSON.parse(await ok(['topic', 'describe', 'cfg', '--configs', '--format', 'json'])) as Entry[]).find((c) => c.name === 'retention.ms');
    assert.deepEqual(await show(), { name: 'retention.ms', value: '3600000', source: 'DYNAMIC_TOPIC_CONFIG', readOnly: false, sensitive: false, isDefault: false });
    await ok(['topic', 'alter-config', 'cfg', '--delete', 'retention.ms']);
    assert.equal((await show())?.isDefault, true);
    const bad = await sluice(['topic', 'alter-config', 'cfg', '--set', 'no.such.key=1']);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /INVALID_CONFIG/);
  });
});

describe('every read verb prints json and yaml that parse to the same data', () => {
  const verbs: string[][] = [
    ['topic', 'list'], ['topic', 'describe', 'rt'], ['topic', 'describe', 'rt', '--configs'], ['topic', 'reassignments'],
    ['group', 'list'], ['group', 'describe', 'cli-g'], ['cluster', 'describe'], ['cluster', 'status'], ['cluster', 'health'],
    ['user', 'list'],
  ];
  for (const argv of verbs) {
    it(argv.join(' '), async () => {
      const json = JSON.parse(await ok([...argv, '--format', 'json'])) as unknown;
      const yaml = load(await ok([...argv, '--format', 'yaml']));
      assert.equal(typeof json, 'object');
      // Only volatile fields may differ between the two calls.
      const stable = (v: unknown): string => JSON.stringify(v, (k, x: unknown) => (['lagSeconds', 'logEndOffset', 'lag'].includes(k) ? 0 : x));
      assert.equal(stable(yaml), stable(json));
      assert.ok((await ok([...argv, '--format', 'wide'])).length > 0);
    });
  }
});

describe('kcat interop', () => {
  it('kcat reads what sluice produce wrote, and sluice consume reads what kcat wrote', async () => {
    await ok(['topic', 'create', 'kc', '--partitions', '1']);
    await ok(['produce', 'kc', '--key-separator', ':', '--header', 'src=sluice'], 'k1:from-sluice-1\nk2:from-sluice-2\n');
    const seen = await kcat(['-b', broker.bootstrap, '-C', '-t', 'kc', '-p', '0', '-o', 'beginning', '-e', '-q', '-f', '%k=%s|%h\\n']);
    assert.deepEqual(seen.stdout.toString('utf8').trim().split('\n'), ['k1=from-sluice-1|src=sluice', 'k2=from-sluice-2|src=sluice']);
    await kcat(['-b', broker.bootstrap, '-P', '-t', 'kc', '-p', '0', '-K', ':', '-H', 'src=kcat'], { input: Buffer.from('k3:from-kcat\n') });
    const got = lines(await ok(['consume', 'kc', '--offset', '-1', '--until-end', '--format', 'json']));
    assert.deepEqual(got.map((r) => [r.key, r.value, r.headers]), [['k3', 'from-kcat', [{ key: 'src', value: 'kcat' }]]]);
  });
});
