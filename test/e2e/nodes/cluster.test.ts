// A dev cluster of two nodes is two machines as far as pods can tell: each node has its own address and pod range,
// pods on one reach pods on the other by address and by Service name, the API server reaches the worker's kubelet
// (exec, logs, port-forward), NetworkPolicy holds across them, and a worker stopped as a crash stops it goes NotReady,
// then comes back Ready with `node start`. Everything through kubectl of the server's version and berth's CLI.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  berthCli,
  BUSYBOX,
  deleteNamespace,
  freshNamespace,
  kubectl,
  kubectlOk,
  kubectlPortForward,
  readClusterState,
  runCommand,
  stateDir,
} from '../harness/cluster.js';

const FIRST = 'berth';
const WORKER = 'berth-worker';

let ns: string;
before(async () => {
  ns = await freshNamespace('nodes');
});
after(async () => {
  await deleteNamespace(ns);
});

function pod(name: string, node: string, script: string, labels: Record<string, string> = {}): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, labels },
    spec: {
      restartPolicy: 'Never',
      terminationGracePeriodSeconds: 1,
      nodeSelector: { 'kubernetes.io/hostname': node },
      containers: [{ name: 'main', image: BUSYBOX, command: ['sh', '-c', script] }],
    },
  });
}

async function runningPod(name: string, node: string, script: string, labels: Record<string, string> = {}): Promise<string> {
  await kubectlOk(['apply', '-n', ns, '-f', '-'], { input: pod(name, node, script, labels) });
  await kubectlOk(['wait', '-n', ns, `pod/${name}`, '--for=condition=Ready', '--timeout=90s'], { timeoutMs: 100_000 });
  return (await kubectlOk(['get', 'pod', '-n', ns, name, '-o', 'jsonpath={.spec.nodeName} {.status.podIP}'])).trim();
}

async function podToEnd(
  name: string,
  node: string,
  script: string,
  labels: Record<string, string> = {},
): Promise<{ phase: string; log: string; node: string }> {
  await kubectlOk(['apply', '-n', ns, '-f', '-'], { input: pod(name, node, script, labels) });
  await kubectlOk(['wait', '-n', ns, `pod/${name}`, '--for=jsonpath={.status.phase}=Succeeded', '--timeout=90s'], { timeoutMs: 100_000 }).catch(
    () => undefined,
  );
  const [phase, on] = (await kubectlOk(['get', 'pod', '-n', ns, name, '-o', 'jsonpath={.status.phase} {.spec.nodeName}'])).trim().split(' ');
  return { phase: phase!, node: on!, log: (await kubectl(['logs', '-n', ns, name])).stdout };
}

const WEB = (text: string) => `mkdir -p /www && echo ${text} > /www/index.html && httpd -f -p 8080 -h /www`;

const berth = (...args: string[]) => runCommand(process.execPath, [berthCli, 'dev-cluster', ...args, '--state-dir', stateDir()], { timeoutMs: 240_000 });

test('kubectl get nodes: two Ready nodes, each with its own address and pod range', async () => {
  const nodes = JSON.parse(await kubectlOk(['get', 'nodes', '-o', 'json'])).items as {
    metadata: { name: string };
    spec: { podCIDR: string };
    status: { addresses: { type: string; address: string }[]; conditions: { type: string; status: string }[] };
  }[];
  assert.deepEqual(nodes.map((n) => n.metadata.name).sort(), [FIRST, WORKER]);
  for (const n of nodes) assert.equal(n.status.conditions.find((c) => c.type === 'Ready')?.status, 'True', n.metadata.name);
  const ips = nodes.map((n) => n.status.addresses.find((a) => a.type === 'InternalIP')?.address);
  assert.equal(new Set(ips).size, 2, `two addresses: ${ips.join(', ')}`);
  assert.deepEqual(nodes.map((n) => n.spec.podCIDR).sort(), ['10.244.0.0/24', '10.244.1.0/24']);
  const ls = await berth('node', 'ls');
  assert.equal(ls.code, 0, ls.stderr);
  assert.match(ls.stdout, /^NAME\s+STATUS\s+PROCESSES\s+INTERNAL-IP\s+POD-CIDR\n/);
  assert.match(ls.stdout, /\nberth-worker\s+Ready\s+running\s+10\.243\.0\.2\s+10\.244\.1\.0\/24\n/);
});

test('pods on different nodes reach each other by address, both ways, and by Service name from the worker', async () => {
  const [onFirst, firstIp] = (await runningPod('web-first', FIRST, WEB('from-first'), { app: 'web-first' })).split(' ');
  const [onWorker, workerIp] = (await runningPod('web-worker', WORKER, WEB('from-worker'))).split(' ');
  assert.equal(onFirst, FIRST);
  assert.equal(onWorker, WORKER);
  assert.match(workerIp!, /^10\.244\.1\./, "the worker's pod has an address of the worker's range");
  const there = await kubectl(['exec', '-n', ns, 'web-worker', '--', 'timeout', '5', 'wget', '-q', '-O', '-', `http://${firstIp}:8080/`]);
  assert.equal(there.stdout, 'from-first\n', there.stderr);
  const back = await kubectl(['exec', '-n', ns, 'web-first', '--', 'timeout', '5', 'wget', '-q', '-O', '-', `http://${workerIp}:8080/`]);
  assert.equal(back.stdout, 'from-worker\n', back.stderr);
  await kubectlOk(['create', 'service', 'clusterip', 'web-first', '-n', ns, '--tcp=80:8080']);
  // the worker's kube-proxy programs the Service on its next sync: the client tries for up to 30 s
  const r = await podToEnd(
    'client',
    WORKER,
    'n=0; until timeout 3 wget -q -O - http://web-first/ 2>/dev/null; do n=$((n+1)); [ $n -lt 30 ] || exit 1; sleep 1; done',
  );
  assert.equal(r.node, WORKER);
  assert.equal(r.phase, 'Succeeded', r.log);
  assert.equal(r.log, 'from-first\n');
});

test("exec, logs and port-forward reach a pod on the worker through the worker's kubelet", async () => {
  await runningPod('chatty', WORKER, `echo started-on-worker; ${WEB('served-by-worker')}`);
  const exec = await kubectl(['exec', '-n', ns, 'chatty', '--', 'sh', '-c', 'echo out; exit 4']);
  assert.equal(exec.code, 4);
  assert.equal(exec.stdout, 'out\n');
  assert.equal(await kubectlOk(['logs', '-n', ns, 'chatty']), 'started-on-worker\n');
  const pf = await kubectlPortForward(ns, 'chatty', 8080);
  try {
    assert.equal(await (await fetch(`http://127.0.0.1:${pf.port}/`)).text(), 'served-by-worker\n');
  } finally {
    pf.stop();
  }
});

test('a NetworkPolicy on the first node holds against a pod on the worker; a pod it allows still connects', async () => {
  const [, ip] = (await runningPod('guarded', FIRST, WEB('guarded'), { role: 'guarded' })).split(' ');
  const policy = {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata: { name: 'only-friends' },
    spec: {
      podSelector: { matchLabels: { role: 'guarded' } },
      policyTypes: ['Ingress'],
      ingress: [{ from: [{ podSelector: { matchLabels: { friend: 'yes' } } }] }],
    },
  };
  await kubectlOk(['apply', '-n', ns, '-f', '-'], { input: JSON.stringify(policy) });
  await runningPod('friend', WORKER, 'sleep 3600', { friend: 'yes' });
  await runningPod('stranger', WORKER, 'sleep 3600');
  const get = (from: string) => kubectl(['exec', '-n', ns, from, '--', 'timeout', '3', 'wget', '-q', '-O', '-', `http://${ip}:8080/`]);
  // the enforcer applies the policy a moment after it is made (as on any cluster): until the stranger is refused,
  // within a bound; then the friend must still get through
  const deadline = Date.now() + 30_000;
  let stranger = await get('stranger');
  while (stranger.code === 0 && Date.now() < deadline) stranger = await get('stranger');
  assert.notEqual(stranger.code, 0, 'the stranger on the worker is refused');
  const friend = await get('friend');
  assert.equal(friend.stdout, 'guarded\n', friend.stderr);
});

test("the dev cluster's registry is reached from the worker: its containerd pulls an image pushed there, its pods reach it", async () => {
  const { registry } = readClusterState();
  // an image of its own (a label): the same bytes as the preloaded busybox would make the kubelet pull that one again
  const dir = mkdtempSync(join(tmpdir(), 'nodes-registry-'));
  const image = `${registry}/nodes-e2e/labelled:${process.pid}`;
  try {
    writeFileSync(join(dir, 'Containerfile'), `FROM ${BUSYBOX}\nLABEL berth.e2e=nodes-${process.pid}\n`);
    const built = await runCommand('podman', ['build', '-q', '-t', image, dir], { timeoutMs: 120_000 });
    assert.equal(built.code, 0, built.stderr);
    const pushed = await runCommand('podman', ['push', '--tls-verify=false', image], { timeoutMs: 120_000 });
    assert.equal(pushed.code, 0, pushed.stderr);
    const spec = JSON.parse(pod('from-registry', WORKER, `wget -q -O - http://${registry}/v2/ && echo reached`)) as {
      spec: { containers: Array<{ image: string; imagePullPolicy?: string }> };
    };
    spec.spec.containers[0]!.image = image;
    spec.spec.containers[0]!.imagePullPolicy = 'Always';
    await kubectlOk(['apply', '-n', ns, '-f', '-'], { input: JSON.stringify(spec) });
    await kubectlOk(['wait', '-n', ns, 'pod/from-registry', '--for=jsonpath={.status.phase}=Succeeded', '--timeout=90s'], { timeoutMs: 100_000 });
    assert.equal(await kubectlOk(['logs', '-n', ns, 'from-registry']), '{}reached\n', 'the pod on the worker reached the registry');
    assert.equal((await kubectlOk(['get', 'pod', '-n', ns, 'from-registry', '-o', 'jsonpath={.spec.nodeName}'])).trim(), WORKER);
  } finally {
    await runCommand('podman', ['rmi', image]);
    rmSync(dir, { recursive: true, force: true });
  }
});

test('node stop: the worker goes NotReady and its pods stop answering; node start: Ready again and pods run there', async () => {
  const [, ip] = (await runningPod('doomed', WORKER, WEB('alive'))).split(' ');
  await runningPod('prober', FIRST, 'sleep 3600');
  const stop = await berth('node', 'stop', WORKER);
  assert.equal(stop.code, 0, stop.stderr);
  assert.equal(stop.stdout, `node ${WORKER} stopped\n`);
  const probe = await kubectl(['exec', '-n', ns, 'prober', '--', 'timeout', '3', 'wget', '-q', '-O', '-', `http://${ip}:8080/`]);
  assert.notEqual(probe.code, 0, 'a pod of a stopped node does not answer');
  // the node lifecycle controller marks it once its heartbeats are older than the grace period (40 s by default)
  await kubectlOk(['wait', `node/${WORKER}`, '--for=condition=Ready=Unknown', '--timeout=120s'], { timeoutMs: 130_000 });
  assert.match((await berth('node', 'ls')).stdout, /\nberth-worker\s+NotReady\s+stopped\s/);
  const again = await berth('node', 'stop', WORKER);
  assert.equal(again.stdout, `node ${WORKER} was not running\n`);
  const refused = await berth('node', 'stop', FIRST);
  assert.notEqual(refused.code, 0);
  assert.match(refused.stderr, /node berth is this machine's own node, where the control plane/);
  const start = await berth('node', 'start', WORKER);
  assert.equal(start.code, 0, start.stderr);
  assert.equal(start.stdout, `node ${WORKER} started\n`);
  await kubectlOk(['wait', `node/${WORKER}`, '--for=condition=Ready', '--timeout=60s'], { timeoutMs: 70_000 });
  const r = await podToEnd('reborn', WORKER, 'echo back on the worker');
  assert.equal(r.phase, 'Succeeded', r.log);
  assert.equal(r.log, 'back on the worker\n');
});
