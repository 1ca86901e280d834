// The README, followed literally by a new user: every fenced `sh` block right after a
// `<!-- readme-test: NAME -->` comment runs (readme-blocks.ts), in README order, in one bash shell (so `export`s
// carry from one section to the next), in a working copy of the repository and a temp HOME, against the dev
// cluster the e2e harness started. A command that exits non-zero fails the test with the command and its output;
// a command with a trailing `# prints TEXT` comment must also print a line TEXT (readme-shell.ts).
// BERTH_E2E_README_VERBOSE=1 shows every command's output.
//
// What differs from a user's machine, and nothing else (each substitution must match a README command, so that a
// reworded README cannot silently skip it):
// - `npm ci` is not run: the working copy links this repository's node_modules and copies its dist/src, which is
//   what `npm ci` and its `prepare` (build:dist) make (no network, no minute of installing; CI's own `npm ci`
//   runs `prepare` on a fresh clone). So `npm install -g .` runs with `--ignore-scripts` (its `prepare` would
//   build the same dist/src again, half a minute on a busy machine), with npm's global prefix in the temp HOME,
//   whose bin/ is on PATH as npm's global bin is on a user's.
// - `bash scripts/upstream/build.sh` and `bash scripts/build-images.sh` are not run: .ci/run builds the cluster and
//   the e2e suite's images before it, and the harness loads the images into the node.
// - `berth dev-cluster up` runs as written, but ~/.berth/dev-cluster is a link to the harness cluster's state
//   dir, so it finds that cluster running; `berth dev-cluster down` is not run (the harness stops the cluster
//   after the other test files).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { kubectl, repoRoot, runCommand, stateDir } from '../harness/cluster.js';
import { readmeBlocks } from './readme-blocks.js';
import { freshUserEnv, runDocumented, substitute, type Substitution } from './readme-shell.js';

const SUBSTITUTIONS: Substitution[] = [
  { command: /^npm ci\b.*/, with: null, why: 'node_modules is linked and dist/src copied from the repository' },
  { command: /^npm install -g \./, with: 'npm install -g --ignore-scripts .', why: 'dist/src is built already' },
  { command: /^bash scripts\/upstream\/build\.sh\b.*/, with: null, why: 'CI builds the upstream cluster before the suite (.ci/run)' },
  { command: /^bash scripts\/build-images\.sh\b.*/, with: null, why: 'the e2e images are built and loaded before the suite' },
  { command: /^berth dev-cluster down\b.*/, with: null, why: 'the harness cluster serves the other test files too' },
];
/** What the working copy holds: what the README's commands read, and what `npm install -g .` builds from. */
const COPIED = [
  'README.md',
  'LICENSE',
  'package.json',
  'package-lock.json',
  'tsconfig.json',
  'tsconfig.build.json',
  'src',
  'deploy',
  'docs',
  'examples',
  'scripts',
];
/** Namespaces the README creates. */
const NAMESPACES = ['fn', 'ci'];
const RUN_LIMIT_MS = 240_000;

let home: string;
let work: string;
before(() => {
  home = mkdtempSync(path.join(tmpdir(), 'berth-readme-home-'));
  work = mkdtempSync(path.join(tmpdir(), 'berth-readme-work-'));
  for (const entry of COPIED) cpSync(path.join(repoRoot, entry), path.join(work, entry), { recursive: true });
  symlinkSync(path.join(repoRoot, 'node_modules'), path.join(work, 'node_modules'));
  cpSync(path.join(repoRoot, 'dist/src'), path.join(work, 'dist/src'), { recursive: true });
  mkdirSync(path.join(home, '.berth'));
  symlinkSync(stateDir(), path.join(home, '.berth/dev-cluster'));
});
after(async () => {
  // the README's shim block stops the agent it started; after a failure before that line, this does
  await runCommand(process.execPath, [path.join(work, 'dist/src/cli/main.js'), 'shim', 'agent', 'stop'], { env: userEnv(), timeoutMs: 90_000 });
  for (const ns of NAMESPACES) await kubectl(['delete', 'namespace', ns, '--ignore-not-found', '--wait=true', '--timeout=60s']);
  rmSync(home, { recursive: true, force: true });
  rmSync(work, { recursive: true, force: true });
});

function userEnv(): NodeJS.ProcessEnv {
  const env = freshUserEnv(home);
  const npmPrefix = path.join(home, '.npm-global');
  return {
    ...env,
    PATH: `${npmPrefix}/bin:${env.PATH}`,
    npm_config_prefix: npmPrefix,
    // `npm install -g .` of a folder is a link: it needs nothing from the network
    npm_config_offline: 'true',
    npm_config_update_notifier: 'false',
    npm_config_fund: 'false',
    npm_config_audit: 'false',
  };
}

test('every readme-test block of README.md runs as written on the dev cluster', { timeout: RUN_LIMIT_MS + 5_000 }, async () => {
  const blocks = readmeBlocks(readFileSync(path.join(repoRoot, 'README.md'), 'utf8'));
  assert.deepEqual(
    blocks.map((b) => b.name),
    ['install', 'shim', 'catalog', 'serve', 'task', 'dev-cluster'],
    'the README sections the test covers',
  );
  const commands = substitute(
    blocks.flatMap((b) => b.commands),
    SUBSTITUTIONS,
  );
  const started = Date.now();
  const ran = await runDocumented(commands, { cwd: work, env: userEnv(), scriptDir: home, timeoutMs: RUN_LIMIT_MS });
  if (process.env.BERTH_E2E_README_VERBOSE)
    commands.forEach((c, i) => process.stdout.write(`$ ${c.text}   [${ran[i].seconds.toFixed(1)} s]\n${ran[i].output}`));
  process.stdout.write(`# README: ${commands.length} commands of ${blocks.length} blocks in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
});
