// Prints the goal rows that the bench scripts of one `npm run bench` wrote to BENCH_GOALS_FILE as one
// markdown table (docs/benchmarks.md keeps the latest), with the machine it ran on.
import { readFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { meetsGoal, type GoalRow } from './goal-rows.js';

const file = process.env.BENCH_GOALS_FILE;
if (!file) throw new Error('BENCH_GOALS_FILE names the rows file the bench scripts wrote');
const rows = readFileSync(file, 'utf8')
  .split('\n')
  .filter((l) => l.trim())
  .map((l) => JSON.parse(l) as GoalRow);

const fmt = (r: number): string => (r >= 10 ? r.toFixed(0) : r.toFixed(2));
console.log(
  `\nMachine: ${cpus().length} cores (${cpus()[0]?.model ?? 'unknown'}), ${Math.round(totalmem() / 2 ** 30)} GiB, load average ${loadavg()[0].toFixed(1)} at the end; ${new Date().toISOString().slice(0, 10)}\n`,
);
console.log('| area | measure | berth | reference (same run) | ratio | goal | met |');
console.log('|---|---|---|---|---|---|---|');
for (const r of rows) {
  // a ratio (×), or an absolute figure in the goal's own unit (ms, MB, /s)
  const unit = r.goal.trim().endsWith('×') ? '×' : ` ${r.goal.trim().split(/\s+/).pop()}`;
  console.log(`| ${r.area} | ${r.measure} | ${r.value} | ${r.reference} | ${fmt(r.ratio)}${unit} | ${r.goal} | ${meetsGoal(r) ? 'yes' : 'no'} |`);
}
