// Which cluster each end-to-end file runs on: stock upstream Kubernetes for the suites, split log streams for what
// needs separate stdout and stderr (and, again, for the output paths), a cluster of its own for the demo.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ALSO_SPLIT, clustersOf, RUNS_ALONE, SPLIT_ONLY } from '../../e2e/harness/suites.js';
import { isPodmanChain } from '../../e2e/harness/machine-snapshot.js';

const e2eSources = fileURLToPath(new URL('../../../../test/e2e/', import.meta.url));

test('the suites run on stock gates; serve and the stream-bound task files with split streams; the output paths on both', () => {
  assert.deepEqual(clustersOf('shim/kustomize.test.js'), ['upstream']);
  assert.deepEqual(clustersOf('reliability/fn-faults.test.js'), ['upstream']);
  assert.deepEqual(clustersOf('serve/docker-cli.test.js'), ['upstream-split']);
  assert.deepEqual(clustersOf('reliability/serve-faults.test.js'), ['upstream-split']);
  assert.deepEqual(clustersOf('task/resources.test.js'), ['upstream-split']);
  assert.deepEqual(clustersOf('serve/merged-logs.test.js'), ['upstream', 'upstream-split']);
  assert.deepEqual(clustersOf('shim/streams.test.js'), ['upstream', 'upstream-split']);
  assert.deepEqual(clustersOf('demo/demo.test.js'), ['own']);
  assert.deepEqual(clustersOf('nodes/cluster.test.js'), ['upstream-nodes']);
});

test('a file of a folder no suite names is an error, not a file that silently runs nowhere', () => {
  assert.throws(() => clustersOf('newface/thing.test.js'), /test\/e2e\/newface\/thing\.test\.js: its folder is in no suite/);
});

test('every folder of test/e2e belongs to a suite', () => {
  const folders = readdirSync(e2eSources, { withFileTypes: true }).filter((d) => d.isDirectory() && !['harness', 'fixtures'].includes(d.name));
  for (const d of folders) {
    const file = readdirSync(join(e2eSources, d.name)).find((f) => f.endsWith('.test.ts'));
    if (file) assert.doesNotThrow(() => clustersOf(`${d.name}/${file.replace(/\.ts$/, '.js')}`), d.name);
  }
});

test('every file the lists name exists, so a rename cannot move a file to another cluster unnoticed', () => {
  const named = [...Object.keys(ALSO_SPLIT), ...RUNS_ALONE, ...Object.keys(SPLIT_ONLY).filter((k) => k.includes('/'))];
  for (const file of named) assert.ok(existsSync(join(e2eSources, file.replace(/\.js$/, '.ts'))), `${file} is named in suites.ts but does not exist`);
  for (const folder of Object.keys(SPLIT_ONLY).filter((k) => !k.includes('/'))) assert.ok(readdirSync(join(e2eSources, folder)).length > 0, folder);
});

test("the leftover check leaves podman's netavark chains alone and keeps every chain of the cluster", () => {
  for (const chain of ['nat NETAVARK-DN-1D8721804F16F', 'filter NETAVARK_FORWARD', 'filter NETAVARK_ISOLATION_1', 'filter NETAVARK_ISOLATION_2'])
    assert.equal(isPodmanChain(chain), true, chain);
  for (const chain of ['nat KUBE-SERVICES', 'filter KUBE-ROUTER-INPUT', 'nat CNI-HOSTPORT-DNAT', 'filter KUBE-FIREWALL'])
    assert.equal(isPodmanChain(chain), false, chain);
});
