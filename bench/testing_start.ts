// Start time of the embeddable test broker (bench process, main thread): the import of
// sluice/testing and the first start in a fresh process (as a test file pays them), then the
// median, min and max of N further starts, each followed by its stop, with the CPU time one start
// costs (all threads of the process). Prints the machine's load average beside the figures, since
// on a shared machine wall times move with it while CPU times hardly do.
// Run: node <outdir>/bench/testing_start.js [--starts N]
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';

const { values } = parseArgs({ options: { starts: { type: 'string', default: '9' } } });
const starts = Math.max(1, Number(values.starts));

const median = (xs: readonly number[]): number => {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

const t0 = performance.now();
const { startBroker } = await import('../src/testing/index.js');
const importMs = performance.now() - t0;
const t1 = performance.now();
const first = await startBroker();
const firstMs = performance.now() - t1;
await first.stop();

const times: number[] = [];
const cpuTimes: number[] = [];
for (let i = 0; i < starts; i++) {
  const t = performance.now();
  const cpu = process.cpuUsage();
  const broker = await startBroker();
  times.push(performance.now() - t);
  const used = process.cpuUsage(cpu);
  cpuTimes.push((used.user + used.system) / 1000);
  await broker.stop();
}
const ms = (x: number): string => `${Math.round(x)} ms`;
console.log(`import: ${ms(importMs)}; first start: ${ms(firstMs)}`);
console.log(`next ${starts} starts: median ${ms(median(times))}, min ${ms(Math.min(...times))}, max ${ms(Math.max(...times))}; CPU per start: median ${ms(median(cpuTimes))}`);
console.log(`load average: ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
