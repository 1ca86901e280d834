// `npm run bench`: runs every benchmark, each in its own process with its own dev cluster, then prints
// one table of every goal beside its figure (bench/goal-table.ts). BENCH_ONLY=shim,serve runs a subset.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = fileURLToPath(new URL('.', import.meta.url));
const BENCHES = ['run', 'shim', 'serve', 'task', 'images', 'build', 'api-cost', 'load'];
const only = process.env.BENCH_ONLY?.split(',').map((s) => s.trim());
const dir = mkdtempSync(join(tmpdir(), 'berth-bench-'));
const env = { ...process.env, BENCH_GOALS_FILE: join(dir, 'goals.jsonl') };
let failed = 0;
try {
  for (const name of BENCHES.filter((b) => !only || only.includes(b))) {
    process.stderr.write(`bench: ${name}\n`);
    const r = spawnSync(process.execPath, [join(here, `${name}.js`)], { env, stdio: 'inherit' });
    if (r.status !== 0) {
      failed++;
      process.stderr.write(`bench: ${name} failed (exit ${r.status ?? r.signal})\n`);
    }
  }
  spawnSync(process.execPath, [join(here, 'goal-table.js')], { env, stdio: 'inherit' });
} finally {
  rmSync(dir, { recursive: true, force: true });
}
process.exitCode = failed ? 1 : 0;
