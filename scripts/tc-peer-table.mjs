// The parity table of scripts/tc-peer-suite.sh: per file, tests and passes per engine (vitest JSON reports in
// <results>/<engine>/<file>.json), then the tests that pass on podman and fail on berth, and the tests only berth ran
// (the suite leaves some out under CI_PODMAN, which only the podman run sets).
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
  if (!existsSync(json)) return { tests: undefined, pass: undefined, passed: [], names: [], why: {}, seconds };
  const all = JSON.parse(readFileSync(json, 'utf8')).testResults.flatMap((t) => t.assertionResults);
  const passed = all.filter((a) => a.status === 'passed').map((a) => a.fullName);
  const why = Object.fromEntries(all.filter((a) => a.status === 'failed').map((a) => [a.fullName, (a.failureMessages[0] ?? '').split('\n')[0].slice(0, 240)]));
  return { tests: all.length, pass: passed.length, passed, names: all.map((a) => a.fullName), why, seconds };
}

console.log(`| file | tests | ${engines.map((e) => `${e} pass (s)`).join(' | ')} |`);
console.log(`|---|---|${engines.map(() => '---').join('|')}|`);
const totals = Object.fromEntries(engines.map((e) => [e, 0]));
const testTotals = Object.fromEntries(engines.map((e) => [e, 0]));
const onlyPodman = [];
const onlyBerthRan = [];
/** One count, or one per engine (`podman / berth`) when the engines ran different tests. */
const counts = (ns) => (new Set(ns).size <= 1 ? String(ns[0] ?? '?') : ns.map((n) => n ?? '?').join(' / '));
for (const file of files) {
  const rs = engines.map((e) => result(e, file));
  rs.forEach((r, i) => {
    totals[engines[i]] += r.pass ?? 0;
    testTotals[engines[i]] += r.tests ?? 0;
  });
  console.log(`| ${file} | ${counts(rs.map((r) => r.tests))} | ${rs.map((r) => `${r.pass ?? 'no result'} (${r.seconds})`).join(' | ')} |`);
  if (engines.length === 2) {
    for (const t of rs[0].passed) if (!rs[1].passed.includes(t)) onlyPodman.push(`${file}: ${t} — ${rs[1].why[t] ?? 'no result'}`);
    // both ran the file, and podman's run never registered the test: the suite left it out for podman
    if (rs[0].tests !== undefined) for (const t of rs[1].names) if (!rs[0].names.includes(t)) onlyBerthRan.push(`${file}: ${t} — ${rs[1].passed.includes(t) ? 'passed' : `failed: ${rs[1].why[t]}`}`);
  }
}
console.log(`| total | ${counts(engines.map((e) => testTotals[e]))} | ${engines.map((e) => totals[e]).join(' | ')} |`);
if (onlyPodman.length) console.log(`\nPass on podman, not on berth:\n${onlyPodman.map((d) => `- ${d}`).join('\n')}`);
if (onlyBerthRan.length) console.log(`\nRun on berth only (left out for podman under CI_PODMAN):\n${onlyBerthRan.map((d) => `- ${d}`).join('\n')}`);
