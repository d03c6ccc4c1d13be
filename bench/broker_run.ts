// One scenario run's broker (bench process, main thread): a fresh broker child process, the
// quiet gate, the run's body, then the broker stopped whatever happened; a failure carries the
// tail of the broker's stderr. Shared by the data-path scenarios and the group scenarios.
import { BrokerProcess } from '../src/bench/broker_process.js';
import type { BrokerOptions } from '../src/bench/broker_process.js';
import type { Window } from './profile.js';
import { notQuietText, waitQuiet } from './quiet.js';
import type { RunSettings } from './scenarios.js';

/** What a run collects besides its metrics. */
export interface RunCtx {
  readonly notes: string[];
  loadWindow?: Window;
}

export async function withBroker<T>(
  flush: string, s: RunSettings, ctx: RunCtx, body: (b: BrokerProcess) => Promise<T>, brokerArgs: readonly string[] = [],
): Promise<T> {
  const opts: BrokerOptions = { flush, shards: s.shards, args: brokerArgs, ...(s.brokerNodeArgs ? { nodeArgs: s.brokerNodeArgs } : {}) };
  const broker = await BrokerProcess.start(opts);
  try {
    const q = await waitQuiet(s.quietWaitS);
    if (!q.quiet) ctx.notes.push(`not quiet: ${notQuietText(q)}`);
    return await body(broker);
  } catch (err) {
    const tail = broker.stderr.trim().split('\n').slice(-5).join(' | ');
    throw new Error(`${(err as Error).message}${tail === '' ? '' : ` [broker stderr: ${tail}]`}`);
  } finally {
    const code = await broker.stop();
    if (code !== 0) ctx.notes.push(`broker exit code ${code}`);
  }
}
