import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parse } from 'yaml';
import { userRbac } from '../../../src/devcluster/bootstrap-objects.js';
import { tokenFile } from '../../../src/devcluster/identities.js';
import { ruleWords } from '../../../src/devcluster/host.js';
import { Layout } from '../../../src/devcluster/layout.js';
import { cniConflist, containerdConfig, kubeletConfig } from '../../../src/devcluster/node-configs.js';

const layout = new Layout('/tmp/state');

test('versions come from scripts/upstream/versions.sh, and binaries from the cache directory of their version', () => {
  assert.match(layout.versions.K8S_VERSION, /^v1\.36\.\d+$/);
  assert.equal(layout.bin('kubernetes', 'kubelet'), `${layout.versions.BERTH_K8S_CACHE}/kubernetes-${layout.versions.K8S_VERSION}/bin/kubelet`);
});

test('the kubelet: cgroup v1 allowed, stock gates unless split streams are asked for, a check interval of at least 3 s', () => {
  const stock = parse(kubeletConfig(layout, { splitLogStreams: false, containerLogMaxBytes: 1048576, containerLogCheckMs: 0 }));
  assert.equal(stock.failCgroupV1, false);
  assert.equal(stock.featureGates, undefined);
  assert.equal(stock.containerLogMonitorInterval, '3s');
  assert.equal(stock.containerLogMaxSize, '1048576');
  const split = parse(kubeletConfig(layout, { splitLogStreams: true, containerLogMaxBytes: 10485760, containerLogCheckMs: 10000 }));
  assert.deepEqual(split.featureGates, { PodLogsQuerySplitStreams: true });
  assert.equal(split.containerLogMonitorInterval, '10s');
});

test('containerd: the pinned pause image, the runc wrapper, clamped oom scores, the node\'s own CNI folder', () => {
  const toml = containerdConfig(layout, '/run/berth-k8s/runc-delayed');
  assert.match(toml, new RegExp(`sandbox = '${layout.versions.PAUSE_TAG.replace(/\./g, '\\.')}'`));
  assert.match(toml, /BinaryName = '\/run\/berth-k8s\/runc-delayed'/);
  assert.match(toml, /restrict_oom_score_adj = true/);
  assert.match(toml, /conf_dir = '\/var\/lib\/berth-k8s\/cni\/net\.d'/);
  const cni = JSON.parse(cniConflist());
  assert.equal(cni.plugins[0].ipMasq, false, 'no NAT between pods: NetworkPolicy sees pod addresses');
});

test('a users file rule without namespaces is cluster-wide; one with namespaces is a Role in each', () => {
  const objects = userRbac({
    name: 'viewer',
    token: 't',
    groups: [],
    rules: [
      { apiGroups: [''], resources: ['pods'], verbs: ['get'] },
      { apiGroups: [''], resources: ['pods/log'], verbs: ['get'], namespaces: ['ci', 'fn'] },
    ],
  });
  const kinds = objects.map((o) => `${o.kind}/${(o.metadata as { namespace?: string }).namespace ?? ''}`);
  assert.deepEqual(kinds, ['ClusterRole/', 'ClusterRoleBinding/', 'Namespace/', 'Role/ci', 'RoleBinding/ci', 'Namespace/', 'Role/fn', 'RoleBinding/fn']);
  assert.deepEqual((objects[3] as { rules: unknown[] }).rules, [{ apiGroups: [''], resources: ['pods/log'], verbs: ['get'] }]);
});

test('the token file quotes groups as kube-apiserver reads them', () => {
  assert.equal(tokenFile([{ name: 'admin', token: 'abc', groups: ['system:masters', 'ops'] }, { name: 'shim', token: 'def', groups: [] }]), 'abc,admin,admin,"system:masters,ops"\ndef,shim,shim,""\n');
});

test('iptables-save rules split into words, quoted comments whole', () => {
  assert.deepEqual(ruleWords('FORWARD -m comment --comment "kube-router netpol - X" -j KUBE-ROUTER-FORWARD'), ['FORWARD', '-m', 'comment', '--comment', 'kube-router netpol - X', '-j', 'KUBE-ROUTER-FORWARD']);
});
