// One table of every benchmark goal: each bench script reports its goal rows here, and
// bench/goal-table.ts prints them together after `npm run bench` has run them all.
// Rows travel as JSON lines in the file named by BENCH_GOALS_FILE (unset: rows are only printed by
// the script itself), so each bench stays a separate process with its own dev cluster.
import { appendFileSync } from 'node:fs';

export interface GoalRow {
  /** which face or part: "shim", "serve", "task", "dev cluster" */
  area: string;
  /** what was measured, e.g. "warm call vs kubectl flow" */
  measure: string;
  /** berth's own figure with its unit, e.g. "495 ms" or "41 MiB/s" */
  value: string;
  /** berth / reference, as the goal states it (time ratios: lower is better; throughput: higher) */
  ratio: number;
  /** the reference measured in the same run, e.g. "kubectl flow 1085 ms" */
  reference: string;
  /** the goal as the issue states it: "≤ 0.33×", "≥ 0.5×", "≤ 200 MB", "≤ 60 ms" (then ratio is the figure in that unit) */
  goal: string;
}

/** Whether a row meets its goal ("≤ X" / "≥ X", X a number followed by a unit or ×). */
export function meetsGoal(row: Pick<GoalRow, 'ratio' | 'goal'>): boolean {
  const m = /^(≤|≥)\s*([\d.]+)/.exec(row.goal.trim());
  if (!m) throw new Error(`goal "${row.goal}" must start with ≤ or ≥ and a number`);
  const bound = Number(m[2]);
  return m[1] === '≤' ? row.ratio <= bound : row.ratio >= bound;
}

export function reportGoal(row: GoalRow): void {
  const file = process.env.BENCH_GOALS_FILE;
  if (file) appendFileSync(file, `${JSON.stringify(row)}\n`);
}
