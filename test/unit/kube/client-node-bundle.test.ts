import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import * as fromPackage from '@kubernetes/client-node';
import * as bundled from '../../../src/kube/client-node.js';

const builtFile = fileURLToPath(new URL('../../../src/kube/client-node.js', import.meta.url));

test('the build bundled client-node: one module that imports nothing of the package (npm run build, not tsc alone)', () => {
  const text = readFileSync(builtFile, 'utf8');
  assert.doesNotMatch(
    text,
    /from ["']@kubernetes\/client-node["']/,
    `${builtFile} still re-exports the package: run npm run build (tsc alone skips scripts/bundle-client-node.mjs)`,
  );
  // the package's dependencies stay imports: ws above all, which berth uses too
  assert.match(text, /from ["']isomorphic-ws["']/);
});

test("the bundle exports every name the source re-exports, and they work as the package's do", () => {
  for (const name of ['AuthorizationV1Api', 'CoordinationV1Api', 'CoreV1Api', 'KubeConfig', 'NetworkingV1Api', 'V1MicroTime', 'VersionApi', 'Watch'] as const) {
    assert.equal(typeof bundled[name], 'function', name);
    assert.notEqual(bundled[name], fromPackage[name], `${name} is the bundle's own`);
  }
  const kc = new bundled.KubeConfig();
  kc.loadFromString(
    'apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "https://127.0.0.1:6443"}}]\nusers: [{name: u, user: {token: t}}]\ncontexts: [{name: x, context: {cluster: c, user: u, namespace: ns}}]\ncurrent-context: x\n',
  );
  assert.equal(kc.getCurrentCluster()?.server, 'https://127.0.0.1:6443');
  assert.ok(kc.makeApiClient(bundled.CoreV1Api) instanceof bundled.CoreV1Api);
  const at = '2026-11-26T03:00:00.123456Z';
  assert.equal(new bundled.V1MicroTime(at).toISOString(), new fromPackage.V1MicroTime(at).toISOString());
});
