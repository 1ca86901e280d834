// kustomize and kpt start a `docker` process for every question they ask: `docker version`, `image inspect`
// and a thin `docker run` client of the agent must not load @kubernetes/client-node (half a second each).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { scratchDir } from '../../util/scratch.js';

const main = fileURLToPath(new URL('../../../src/cli/main.js', import.meta.url));
// Reports every module URL resolved, through node's module hooks, on stderr.
const hook =
  'data:text/javascript,import{registerHooks}from"node:module";registerHooks({resolve(s,c,next){const r=next(s,c);process.stderr.write("RESOLVED "+r.url+"\\n");return r;}})';

function modulesLoadedBy(args: string[]): string[] {
  const r = spawnSync(process.execPath, ['--import', hook, main, ...args], { encoding: 'utf8', env: { ...process.env, BERTH_SHIM_AGENT: '' } });
  assert.equal(r.status, 0, r.stderr);
  return r.stderr
    .split('\n')
    .filter((l) => l.startsWith('RESOLVED '))
    .map((l) => l.slice('RESOLVED '.length));
}

for (const args of [
  ['docker', 'version', '--format', '{{.Client.Version}}'],
  ['docker', 'image', 'inspect', 'x:1'],
  ['docker', 'run', '--help'],
]) {
  test(`docker ${args.slice(1).join(' ')} does not load the Kubernetes client`, () => {
    const loaded = modulesLoadedBy(args);
    assert.ok(loaded.length > 0, 'the hook saw nothing');
    assert.deepEqual(loaded.filter((u) => u.includes('@kubernetes/client-node')).slice(0, 1), []);
  });
}

// The help a user asks the real process for, as `berth docker ...` and through the `docker` link
// (`berth shim install`): usage on stdout and exit 0, as the docker CLI gives it.
test('berth docker, --help and -h, and the same through a link named docker: usage, exit 0', () => {
  const dir = scratchDir('berth-link-');
  try {
    symlinkSync(main, join(dir, 'docker'));
    const calls = [[main, 'docker'], [main, 'docker', '--help'], [main, 'docker', '-h'], [join(dir, 'docker'), '--help'], [join(dir, 'docker')]];
    for (const argv of calls) {
      const r = spawnSync(process.execPath, argv, { encoding: 'utf8' });
      assert.equal(r.status, 0, `${argv.slice(1).join(' ')}: ${r.stderr}`);
      assert.match(r.stdout, /Run 'docker COMMAND --help'/, argv.slice(1).join(' '));
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
