// The parity table of scripts/tc-peer-suite.sh: per file, tests and passes per engine (vitest JSON reports in
// <results>/<engine>/<file>.json), then the tests that pass on podman and fail on berth.
//   node scripts/tc-peer-table.mjs /tmp/tc-peer/results
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const dir = process.argv[2];
const engines = ['podman', 'berth'].filter((e) => existsSync(join(dir, e)));
const files = [...new Set(engines.flatMap((e) => readdirSync(join(dir, e)).filter((f) => f.endsWith('.log')).map((f) => f.slice(0, -4))))].sort();

function result(engine, file) {
  const json = join(dir, engine, `${file}.json`);
  const secondsFile = join(dir, engine, `${file}.seconds`);
  const seconds = existsSync(secondsFile) ? readFileSync(secondsFile, 'utf8').trim() : '?';
  if (!existsSync(json)) return { tests: undefined, pass: undefined, passed: [], seconds };
  const all = JSON.parse(readFileSync(json, 'utf8')).testResults.flatMap((t) => t.assertionResults);
  const passed = all.filter((a) => a.status === 'passed').map((a) => a.fullName);
  const why = Object.fromEntries(all.filter((a) => a.status === 'failed').map((a) => [a.fullName, (a.failureMessages[0] ?? '').split('\n')[0].slice(0, 240)]));
  return { tests: all.length, pass: passed.length, passed, why, seconds };
}

console.log(`| file | tests | ${engines.map((e) => `${e} pass (s)`).join(' | ')} |`);
console.log(`|---|---|${engines.map(() => '---').join('|')}|`);
const totals = Object.fromEntries(engines.map((e) => [e, 0]));
let tests = 0;
const onlyPodman = [];
for (const file of files) {
  const rs = engines.map((e) => result(e, file));
  const n = rs.find((r) => r.tests !== undefined)?.tests;
  tests += n ?? 0;
  rs.forEach((r, i) => (totals[engines[i]] += r.pass ?? 0));
  console.log(`| ${file} | ${n ?? '?'} | ${rs.map((r) => `${r.pass ?? 'no result'} (${r.seconds})`).join(' | ')} |`);
  if (engines.length === 2) for (const t of rs[0].passed) if (!rs[1].passed.includes(t)) onlyPodman.push(`${file}: ${t} — ${rs[1].why[t] ?? 'no result'}`);
}
console.log(`| total | ${tests} | ${engines.map((e) => totals[e]).join(' | ')} |`);
if (onlyPodman.length) console.log(`\nPass on podman, not on berth:\n${onlyPodman.map((d) => `- ${d}`).join('\n')}`);
