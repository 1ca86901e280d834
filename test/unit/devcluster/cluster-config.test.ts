import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parse } from 'yaml';
import { userRbac } from '../../../src/devcluster/bootstrap-objects.js';
import { tokenFile } from '../../../src/devcluster/identities.js';
import { ruleWords } from '../../../src/devcluster/host.js';
import { Layout } from '../../../src/devcluster/layout.js';
import { cniConflist, containerdConfig, kubeletConfig, kubeProxyConfig } from '../../../src/devcluster/node-configs.js';
import { otherHostsToml, REGISTRY_ADDRESS, registryConfig, registryHostsToml } from '../../../src/devcluster/registry.js';
import { containerdArgs, kubeletArgs, kubeProxyArgs } from '../../../src/devcluster/component-args.js';
import { nodeNamed, nodeSpec, nodeSpecs, partName } from '../../../src/devcluster/nodes.js';

const layout = new Layout('/tmp/state');
const first = nodeSpec(0);
const worker = nodeSpec(1);
const options = { splitLogStreams: false, containerLogMaxBytes: 1048576, containerLogCheckMs: 0 };

test('versions come from scripts/upstream/versions.sh, and binaries from the cache directory of their version', () => {
  assert.match(layout.versions.K8S_VERSION, /^v1\.36\.\d+$/);
  assert.equal(layout.bin('kubernetes', 'kubelet'), `${layout.versions.BERTH_K8S_CACHE}/kubernetes-${layout.versions.K8S_VERSION}/bin/kubelet`);
});

test('the kubelet: cgroup v1 allowed, stock gates unless split streams are asked for, a check interval of at least 3 s', () => {
  const stock = parse(kubeletConfig(layout, first, { splitLogStreams: false, containerLogMaxBytes: 1048576, containerLogCheckMs: 0 }));
  assert.equal(stock.failCgroupV1, false);
  assert.equal(stock.featureGates, undefined);
  assert.equal(stock.containerLogMonitorInterval, '3s');
  assert.equal(stock.containerLogMaxSize, '1048576');
  const split = parse(kubeletConfig(layout, first, { splitLogStreams: true, containerLogMaxBytes: 10485760, containerLogCheckMs: 10000 }));
  assert.deepEqual(split.featureGates, { PodLogsQuerySplitStreams: true });
  assert.equal(split.containerLogMonitorInterval, '10s');
});

test("containerd: the pinned pause image, the runc wrapper, clamped oom scores, the node's own CNI folder", () => {
  const toml = containerdConfig(layout, first, '/run/berth-k8s/runc-delayed');
  assert.match(toml, new RegExp(`sandbox = '${layout.versions.PAUSE_TAG.replace(/\./g, '\\.')}'`));
  assert.match(toml, /BinaryName = '\/run\/berth-k8s\/runc-delayed'/);
  assert.match(toml, /restrict_oom_score_adj = true/);
  assert.match(toml, /conf_dir = '\/var\/lib\/berth-k8s\/cni\/net\.d'/);
  assert.match(toml, /\[plugins\.'io\.containerd\.cri\.v1\.images'\.registry\]\n {2}config_path = '\/var\/lib\/berth-k8s\/containerd-hosts'/);
  const cni = JSON.parse(cniConflist(first));
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
  assert.equal(
    tokenFile([
      { name: 'admin', token: 'abc', groups: ['system:masters', 'ops'] },
      { name: 'shim', token: 'def', groups: [] },
    ]),
    'abc,admin,admin,"system:masters,ops"\ndef,shim,shim,""\n',
  );
});

test('iptables-save rules split into words, quoted comments whole', () => {
  assert.deepEqual(ruleWords('FORWARD -m comment --comment "kube-router netpol - X" -j KUBE-ROUTER-FORWARD'), [
    'FORWARD',
    '-m',
    'comment',
    '--comment',
    'kube-router netpol - X',
    '-j',
    'KUBE-ROUTER-FORWARD',
  ]);
});

test('nodes: the first is this machine (berth), then berth-worker and berth-worker2, each with its own address, pod range and folders', () => {
  assert.deepEqual(
    nodeSpecs(3).map((n) => [n.name, n.ip, n.podCidr, n.netns]),
    [
      ['berth', '10.244.0.1', '10.244.0.0/24', undefined],
      ['berth-worker', '10.243.0.2', '10.244.1.0/24', 'berth-worker'],
      ['berth-worker2', '10.243.0.3', '10.244.2.0/24', 'berth-worker2'],
    ],
  );
  assert.throws(() => nodeSpecs(4), /--nodes must be a whole number from 1 to 3, got 4/);
  assert.throws(() => nodeSpecs(0), /from 1 to 3/);
  assert.throws(() => nodeNamed('berth-worker2', 2), /no node "berth-worker2" in the dev cluster; its nodes: berth, berth-worker/);
  assert.equal(partName(first, 'kubelet'), 'kubelet');
  assert.equal(partName(worker, 'kubelet'), 'berth-worker.kubelet');
});

test("a worker's parts run in its network and keep to its own folders, cgroup and pod range", () => {
  const kubelet = parse(kubeletConfig(layout, worker, options));
  assert.equal(kubelet.address, '10.243.0.2');
  assert.equal(kubelet.cgroupRoot, '/berth-k8s/nodes/berth-worker');
  assert.equal(kubelet.containerRuntimeEndpoint, 'unix:///run/berth-k8s/nodes/berth-worker/containerd.sock');
  assert.deepEqual(kubelet.clusterDNS, ['10.244.0.1'], 'DNS stays on the first node, routed to');
  const toml = containerdConfig(layout, worker);
  assert.match(toml, /root = '\/var\/lib\/berth-k8s\/nodes\/berth-worker\/containerd'/);
  assert.match(toml, /conf_dir = '\/var\/lib\/berth-k8s\/nodes\/berth-worker\/cni\/net\.d'/);
  const cni = JSON.parse(cniConflist(worker));
  assert.deepEqual(cni.plugins[0].ipam.ranges, [[{ subnet: '10.244.1.0/24', gateway: '10.244.1.1' }]]);
  assert.equal(parse(kubeProxyConfig(layout, worker)).hostnameOverride, 'berth-worker');
  assert.deepEqual(containerdArgs(layout, worker).slice(0, 3), ['nsenter', '--net=/run/netns/berth-worker', '--']);
  assert.equal(containerdArgs(layout, first)[0], 'unshare', "the first node runs in this machine's network");
  assert.deepEqual(kubeletArgs(layout, worker, 42).slice(0, 4), ['nsenter', '--mount=/proc/42/ns/mnt', '--net=/proc/42/ns/net', '--']);
  assert.ok(kubeletArgs(layout, worker, 42).includes('--kubeconfig=/tmp/state/config/berth-worker.kubelet.kubeconfig'));
  assert.deepEqual(kubeProxyArgs(layout, worker).slice(0, 2), ['nsenter', '--net=/run/netns/berth-worker']);
});

test("the registry: docker-registry on the bridge address with deletes on; every node's containerd pulls from it over plain HTTP", () => {
  const config = parse(registryConfig());
  assert.deepEqual(config.http, { addr: REGISTRY_ADDRESS });
  assert.equal(config.storage.delete.enabled, true);
  // not loopback: workers and pods, in network namespaces of their own, reach the bridge address
  assert.match(REGISTRY_ADDRESS, /^10\.244\.0\.1:\d+$/);
  assert.equal(registryHostsToml(), `server = 'http://${REGISTRY_ADDRESS}'\n\n[host.'http://${REGISTRY_ADDRESS}']\n  capabilities = ['pull', 'resolve']\n`);
  // every other host (a pod serving a step image): HTTPS, its own certificate taken; no server line, so the host pulled is the one named
  assert.match(otherHostsToml(), /^skip_verify = true$/m);
  assert.doesNotMatch(otherHostsToml(), /^(server|\[host)/m);
});
