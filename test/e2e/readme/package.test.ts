// What `npm install -g` and the npm package give a user: berth's built code, its Roles, docs, examples and the
// license, and none of berth's tests or benchmarks (`npm pack --dry-run`, scripts off: dist/ is already built).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { repoRoot, runCommand } from '../harness/cluster.js';
import { freshUserEnv } from './readme-shell.js';

test('the npm package ships berth, its Roles, docs, examples and LICENSE, and no tests or benchmarks', async () => {
  const env = { ...freshUserEnv(process.env.HOME ?? '/root'), npm_config_offline: 'true', npm_config_update_notifier: 'false' };
  const r = await runCommand('npm', ['pack', '--dry-run', '--json', '--ignore-scripts', repoRoot], { env });
  assert.equal(r.code, 0, r.stderr);
  const files = (JSON.parse(r.stdout) as Array<{ files: Array<{ path: string }> }>)[0].files.map((f) => f.path);
  for (const wanted of [
    'LICENSE',
    'README.md',
    'package.json',
    'dist/src/cli/main.js',
    'deploy/rbac/shim-role.yaml',
    'deploy/rbac/serve-role.yaml',
    'docs/catalog.md',
    'examples/catalog.yaml',
    'examples/site/kustomization.yaml',
  ]) {
    assert.ok(files.includes(wanted), `${wanted} is not in the package`);
  }
  assert.deepEqual(
    files.filter((f) => /^(dist\/(test|bench)|test|bench|src|images|scripts|node_modules)\//.test(f)),
    [],
    'the package holds no tests, benchmarks, sources or build scripts',
  );
  const pkg = JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { license: string };
  assert.equal(pkg.license, 'Apache-2.0');
  assert.match(readFileSync(path.join(repoRoot, 'LICENSE'), 'utf8'), /Apache License\s+Version 2\.0, January 2004/);
});
