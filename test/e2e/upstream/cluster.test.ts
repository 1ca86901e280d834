// The upstream dev cluster is real Kubernetes: a v1.36 server built from the release, one Ready node on containerd,
// and pods that behave as on any cluster (exit codes, exec, logs, cp, attach, port-forward, Service names, volume
// claims, NetworkPolicy), all through kubectl of the server's own version.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BUSYBOX, deleteNamespace, freshNamespace, kubeConfig, kubectl, kubectlOk, kubectlPortForward, waitForPod } from '../harness/cluster.js';

let ns: string;
before(async () => {
  ns = await freshNamespace('upstream');
});
after(async () => {
  await deleteNamespace(ns);
});

function pod(name: string, script: string, extra: Record<string, unknown> = {}, labels: Record<string, string> = {}): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, labels },
    spec: { restartPolicy: 'Never', terminationGracePeriodSeconds: 1, containers: [{ name: 'main', image: BUSYBOX, command: ['sh', '-c', script], ...extra }] },
  });
}

/** A pod run to its end: its exit code and log (a short pod can end before `kubectl run -i` attaches). */
async function podToEnd(name: string, script: string, labels: Record<string, string> = {}): Promise<{ exitCode: number; log: string }> {
  await kubectlOk(['apply', '-n', ns, '-f', '-'], { input: pod(name, script, {}, labels) });
  const done = await waitForPod(kubeConfig(), ns, name, (p) => p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed', 90_000);
  const exitCode = done.status!.containerStatuses![0]!.state!.terminated!.exitCode;
  return { exitCode, log: await kubectlOk(['logs', '-n', ns, name]) };
}

async function runningPod(name: string, script: string, labels: Record<string, string> = {}): Promise<void> {
  await kubectlOk(['apply', '-n', ns, '-f', '-'], { input: pod(name, script, {}, labels) });
  await kubectlOk(['wait', '-n', ns, `pod/${name}`, '--for=condition=Ready', '--timeout=90s'], { timeoutMs: 100_000 });
}

test('kubectl version: a v1.36 server built from the release, and kubectl of the same version', async () => {
  const v = JSON.parse(await kubectlOk(['version', '-o', 'json']));
  assert.match(v.serverVersion.gitVersion, /^v1\.36\.\d+$/);
  assert.equal(v.serverVersion.major, '1');
  assert.equal(v.serverVersion.minor, '36');
  assert.equal(v.clientVersion.gitVersion, v.serverVersion.gitVersion);
});

test('kubectl get nodes -o wide: one Ready node running containerd 2', async () => {
  const out = await kubectlOk(['get', 'nodes', '-o', 'wide', '--no-headers']);
  const lines = out.trim().split('\n');
  assert.equal(lines.length, 1, out);
  assert.match(lines[0]!, /\sReady\s/);
  assert.match(lines[0]!, /containerd:\/\/2\./);
});

test("kubectl run -i --rm: the script's output and exit code", async () => {
  const r = await kubectl(
    [
      'run',
      'exits',
      '-n',
      ns,
      `--image=${BUSYBOX}`,
      '--restart=Never',
      '-i',
      '--rm',
      '--quiet',
      '--command',
      '--',
      'sh',
      '-c',
      'read line; echo "got $line"; exit 7',
    ],
    { input: 'hello\n', timeoutMs: 120_000 },
  );
  assert.equal(r.code, 7, r.stderr);
  assert.match(r.stdout, /got hello/);
});

test('exec, logs, cp and attach on a running pod', async () => {
  await runningPod('work', 'echo started; echo to-stderr >&2; while true; do sleep 1; done');
  const exec = await kubectl(['exec', '-n', ns, 'work', '--', 'sh', '-c', 'echo out; echo err >&2; exit 3']);
  assert.equal(exec.code, 3);
  assert.equal(exec.stdout, 'out\n');
  // kubectl adds its own line after the command's stderr
  assert.equal(exec.stderr, 'err\ncommand terminated with exit code 3\n');
  // the log merges stdout and stderr as the runtime read them from two pipes: lines written a moment apart may swap
  assert.deepEqual((await kubectlOk(['logs', '-n', ns, 'work'])).split('\n').sort(), ['', 'started', 'to-stderr']);
  const dir = mkdtempSync(join(tmpdir(), 'berth-cp-'));
  try {
    writeFileSync(join(dir, 'in.txt'), 'copied in\n');
    await kubectlOk(['cp', '-n', ns, join(dir, 'in.txt'), 'work:/tmp/in.txt']);
    assert.equal(await kubectlOk(['exec', '-n', ns, 'work', '--', 'cat', '/tmp/in.txt']), 'copied in\n');
    await kubectlOk(['cp', '-n', ns, 'work:/tmp/in.txt', join(dir, 'out.txt')]);
    assert.equal(readFileSync(join(dir, 'out.txt'), 'utf8'), 'copied in\n');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  await kubectlOk(['apply', '-n', ns, '-f', '-'], { input: pod('attached', 'read line; echo "attached got $line"', { stdin: true, stdinOnce: true }) });
  await kubectlOk(['wait', '-n', ns, 'pod/attached', '--for=condition=Ready', '--timeout=90s'], { timeoutMs: 100_000 });
  const attach = await kubectl(['attach', '-n', ns, 'attached', '-i', '-q'], { input: 'over attach\n', timeoutMs: 60_000 });
  assert.equal(attach.code, 0, attach.stderr);
  assert.match(attach.stdout, /attached got over attach/);
});

test('port-forward reaches a server in a pod', async () => {
  await runningPod('web', 'mkdir -p /www && echo served-by-pod > /www/index.html && httpd -f -p 8080 -h /www');
  const pf = await kubectlPortForward(ns, 'web', 8080);
  try {
    assert.equal(await (await fetch(`http://127.0.0.1:${pf.port}/`)).text(), 'served-by-pod\n');
  } finally {
    pf.stop();
  }
});

// busybox 1.35's wget crashes on -T: timeout(1) bounds it instead
test('a Service name resolves from a pod and reaches its pods', async () => {
  await runningPod('backend', 'mkdir -p /www && echo from-backend > /www/index.html && httpd -f -p 8080 -h /www', { app: 'backend' });
  await kubectlOk(['create', 'service', 'clusterip', 'backend', '-n', ns, '--tcp=80:8080']);
  // kube-proxy programs a new Service on its next sync, seconds later on a busy node: until then its address leads
  // nowhere, so the client tries for up to 30 s before the short name is asked once
  const first = `timeout 3 wget -q -O - http://backend.${ns}.svc.cluster.local/ 2>/dev/null`;
  const r = await podToEnd('client', `n=0; until ${first}; do n=$((n+1)); [ $n -lt 30 ] || exit 1; sleep 1; done; timeout 10 wget -q -O - http://backend/`);
  assert.equal(r.exitCode, 0, r.log);
  assert.equal(r.log, 'from-backend\nfrom-backend\n');
});

test('a PersistentVolumeClaim of the default class binds, and its data outlives the pod', async () => {
  const claim = {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name: 'data' },
    spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '10Mi' } } },
  };
  await kubectlOk(['apply', '-n', ns, '-f', '-'], { input: JSON.stringify(claim) });
  await kubectlOk(['wait', '-n', ns, 'pvc/data', '--for=jsonpath={.status.phase}=Bound', '--timeout=90s'], { timeoutMs: 100_000 });
  const volume = { volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'data' } }] };
  const withVolume = (name: string, script: string) => {
    const p = JSON.parse(pod(name, script, { volumeMounts: [{ name: 'data', mountPath: '/data' }] }));
    Object.assign(p.spec, volume);
    return JSON.stringify(p);
  };
  for (const [name, script] of [
    ['writer', 'echo kept > /data/file'],
    ['reader', 'cat /data/file'],
  ] as const) {
    await kubectlOk(['apply', '-n', ns, '-f', '-'], { input: withVolume(name, script) });
    await kubectlOk(['wait', '-n', ns, `pod/${name}`, '--for=jsonpath={.status.phase}=Succeeded', '--timeout=90s'], { timeoutMs: 100_000 });
  }
  assert.equal(await kubectlOk(['logs', '-n', ns, 'reader']), 'kept\n');
});

test("a deny-all NetworkPolicy stops a pod's egress; a pod it does not select still connects", async () => {
  await runningPod('target', 'mkdir -p /www && echo reachable > /www/index.html && httpd -f -p 8080 -h /www');
  const ip = (await kubectlOk(['get', 'pod', '-n', ns, 'target', '-o', 'jsonpath={.status.podIP}'])).trim();
  const policy = {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata: { name: 'deny-all' },
    spec: { podSelector: { matchLabels: { fenced: 'yes' } }, policyTypes: ['Ingress', 'Egress'] },
  };
  await kubectlOk(['apply', '-n', ns, '-f', '-'], { input: JSON.stringify(policy) });
  const free = await podToEnd('free', `timeout 5 wget -q -O - http://${ip}:8080/`, { free: 'yes' });
  assert.equal(free.exitCode, 0, free.log);
  assert.equal(free.log, 'reachable\n');
  // The enforcer applies a policy to a new pod a moment after the pod starts (on any cluster: policy agents work
  // asynchronously), so the fenced pod tries until it is cut off, within a bound, then must stay cut off.
  await runningPod('fenced', 'sleep 3600', { fenced: 'yes' });
  const attempt = () => kubectl(['exec', '-n', ns, 'fenced', '--', 'timeout', '3', 'wget', '-q', '-O', '-', `http://${ip}:8080/`]);
  const deadline = Date.now() + 30_000;
  let last = await attempt();
  while (last.code === 0 && Date.now() < deadline) last = await attempt();
  assert.notEqual(last.code, 0, `a pod under the deny-all policy still reached ${ip} after 30 s: ${last.stdout}`);
  for (let i = 0; i < 3; i++) {
    const again = await attempt();
    assert.notEqual(again.code, 0, `the deny-all policy let a later request through: ${again.stdout}`);
  }
});
