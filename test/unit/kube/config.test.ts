import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { resolveKubeConfig, KubeConfigError } from '../../../src/kube/config.js';
import { scratchDir } from '../../util/scratch.js';

function kubeconfig(
  ctxs: Array<{ name: string; cluster: string; ns?: string }>,
  clusters: Array<{ name: string; server: string; ca?: string }>,
  current?: string,
): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: clusters.map((c) => ({ name: c.name, cluster: { server: c.server, ...(c.ca ? { 'certificate-authority': c.ca } : {}) } })),
    users: [{ name: 'u', user: { token: 't' } }],
    contexts: ctxs.map((c) => ({ name: c.name, context: { cluster: c.cluster, user: 'u', ...(c.ns ? { namespace: c.ns } : {}) } })),
    ...(current ? { 'current-context': current } : {}),
  });
}

function tmp(t: { after(fn: () => void): void }): string {
  const dir = scratchDir('berth-kc-');
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

test('KUBECONFIG list merges: first file wins for names and current-context; relative paths resolve per file', (t) => {
  const dir = tmp(t);
  mkdirSync(path.join(dir, 'b'));
  writeFileSync(path.join(dir, 'a.yaml'), kubeconfig([{ name: 'one', cluster: 'c1', ns: 'team' }], [{ name: 'c1', server: 'https://one:6443' }], 'one'));
  writeFileSync(
    path.join(dir, 'b', 'b.yaml'),
    kubeconfig(
      [
        { name: 'one', cluster: 'c2' },
        { name: 'two', cluster: 'c2' },
      ],
      [{ name: 'c2', server: 'https://two:6443', ca: 'ca.crt' }],
      'two',
    ),
  );
  const env = { KUBECONFIG: [path.join(dir, 'a.yaml'), path.join(dir, 'missing.yaml'), path.join(dir, 'b', 'b.yaml')].join(':') };
  const a = resolveKubeConfig({ env });
  assert.equal(a.kc.getCurrentContext(), 'one');
  assert.equal(a.kc.getCurrentCluster()?.server, 'https://one:6443');
  assert.equal(a.namespace, 'team');
  const b = resolveKubeConfig({ env: { ...env, BERTH_CONTEXT: 'two' } });
  assert.equal(b.kc.getCurrentCluster()?.server, 'https://two:6443');
  assert.equal(b.kc.getCurrentCluster()?.caFile, path.join(dir, 'b', 'ca.crt'));
  assert.equal(b.namespace, 'default');
  assert.equal(resolveKubeConfig({ env: { ...env, BERTH_NAMESPACE: 'ci' } }).namespace, 'ci');
  assert.throws(
    () => resolveKubeConfig({ env, context: 'nope' }),
    (e: unknown) => e instanceof KubeConfigError && /context "nope" is not in/.test(e.message),
  );
});

test('explicit path wins over KUBECONFIG; ~/.kube/config is the fallback', (t) => {
  const dir = tmp(t);
  writeFileSync(path.join(dir, 'x.yaml'), kubeconfig([{ name: 'x', cluster: 'cx' }], [{ name: 'cx', server: 'https://x' }], 'x'));
  mkdirSync(path.join(dir, 'home/.kube'), { recursive: true });
  writeFileSync(path.join(dir, 'home/.kube/config'), kubeconfig([{ name: 'h', cluster: 'ch', ns: 'home-ns' }], [{ name: 'ch', server: 'https://home' }], 'h'));
  assert.equal(resolveKubeConfig({ kubeconfig: path.join(dir, 'x.yaml'), env: { KUBECONFIG: '/nonexistent' } }).kc.getCurrentCluster()?.server, 'https://x');
  const home = resolveKubeConfig({ env: {}, homeDir: path.join(dir, 'home') });
  assert.equal(home.kc.getCurrentCluster()?.server, 'https://home');
  assert.equal(home.namespace, 'home-ns');
  assert.throws(() => resolveKubeConfig({ kubeconfig: path.join(dir, 'nope.yaml'), env: {} }), /does not exist/);
});

test('in-cluster: service host/port + token, namespace file, POD_NAMESPACE and override', (t) => {
  const dir = tmp(t);
  const sa = path.join(dir, 'sa');
  mkdirSync(sa);
  writeFileSync(path.join(sa, 'token'), 'tok');
  writeFileSync(path.join(sa, 'ca.crt'), 'ca');
  writeFileSync(path.join(sa, 'namespace'), 'ci\n');
  const env = { KUBERNETES_SERVICE_HOST: '10.0.0.1', KUBERNETES_SERVICE_PORT: '443' };
  const ic = resolveKubeConfig({ env, homeDir: dir, serviceAccountDir: sa });
  assert.equal(ic.source, 'in-cluster');
  assert.equal(ic.kc.getCurrentCluster()?.server, 'https://10.0.0.1:443');
  assert.equal(ic.kc.getCurrentCluster()?.caFile, path.join(sa, 'ca.crt'));
  assert.equal(ic.namespace, 'ci');
  assert.equal(resolveKubeConfig({ env: { ...env, BERTH_NAMESPACE: 'x' }, homeDir: dir, serviceAccountDir: sa }).namespace, 'x');
  assert.equal(
    resolveKubeConfig({ env: { ...env, KUBERNETES_SERVICE_HOST: 'fd00::1' }, homeDir: dir, serviceAccountDir: sa }).kc.getCurrentCluster()?.server,
    'https://[fd00::1]:443',
  );
  assert.throws(() => resolveKubeConfig({ env: {}, homeDir: dir, serviceAccountDir: sa }), /no cluster configured/);
});
