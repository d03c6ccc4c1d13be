// Child for the loop-delay tests: runs a LoopDelayMonitor on an otherwise idle main thread,
// prints "ready", and on each stdin line prints the monitor's reading since the previous one as
// one JSON line.
import { createInterface } from 'node:readline';
import { LoopDelayMonitor } from '../../src/common/loop_delay.js';

const monitor = new LoopDelayMonitor(10);
const keepAlive = setInterval(() => undefined, 1000);
const lines = createInterface({ input: process.stdin });
lines.on('line', () => process.stdout.write(`${JSON.stringify(monitor.take())}\n`));
lines.on('close', () => {
  clearInterval(keepAlive);
  monitor.close();
});
process.stdout.write('ready\n');
