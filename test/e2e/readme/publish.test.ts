// docs/catalog.md's way to publish a catalog as an OCI artifact (its block marked `<!-- readme-test: publish -->`):
// `berth catalog push`, then `berth catalog pull` of what it published, run as written against Debian's
// docker-registry on loopback. Substitutions: the registry's address is the loopback one, and `berth` is this
// repository's build (a link on PATH) rather than an `npm install -g`.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import YAML from 'yaml';
import { berthCli, repoRoot } from '../harness/cluster.js';
import { startRegistry, type Registry } from '../catalog/servers.js';
import { readmeBlocks } from './readme-blocks.js';
import { freshUserEnv, runDocumented, substitute } from './readme-shell.js';

let registry: Registry;
let home: string;
before(async () => {
  registry = await startRegistry();
  home = mkdtempSync(path.join(tmpdir(), 'berth-publish-'));
  cpSync(path.join(repoRoot, 'examples'), path.join(home, 'examples'), { recursive: true });
  mkdirSync(path.join(home, 'bin'));
  symlinkSync(berthCli, path.join(home, 'bin/berth'));
});
after(async () => {
  await registry?.close();
  rmSync(home, { recursive: true, force: true });
});

test('docs/catalog.md: berth catalog push publishes a catalog that berth catalog pull reads', async () => {
  const blocks = readmeBlocks(readFileSync(path.join(repoRoot, 'docs/catalog.md'), 'utf8'), 'docs/catalog.md');
  assert.deepEqual(
    blocks.map((b) => b.name),
    ['publish'],
  );
  const commands = substitute(blocks[0].commands, [{ command: /registry\.example\.com/, with: registry.host, why: 'the loopback registry of this test' }]);
  const env = freshUserEnv(home);
  const ran = await runDocumented(commands, { cwd: home, env: { ...env, PATH: `${home}/bin:${env.PATH}` }, scriptDir: home, timeoutMs: 60_000 });
  assert.match(ran[0].output, /--trusted-catalog oci:\/\/127\.0\.0\.1:\d+\/fns\/catalog:v1@sha256:[0-9a-f]{64}/);
  assert.match(ran.at(-1)!.output, /berth-examples: oci:\/\/127\.0\.0\.1:\d+\/fns\/catalog:v1 -> .*vendor\/berth-examples\.yaml/);
  const vendored = YAML.parse(readFileSync(path.join(home, 'vendor/berth-examples.yaml'), 'utf8'));
  assert.deepEqual(vendored, YAML.parse(readFileSync(path.join(repoRoot, 'examples/catalog.yaml'), 'utf8')));
});
