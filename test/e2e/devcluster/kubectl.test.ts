// The installed kubectl against the dev cluster: the commands a user runs every day.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { request } from 'node:http';
import {
  BUSYBOX,
  deleteNamespace,
  freshNamespace,
  kubeConfig,
  kubeconfigPath,
  kubectl,
  kubectlOk,
  waitForPod,
} from '../harness/cluster.js';

const podYaml = (ns: string, name: string, command: string, extra = '') => `apiVersion: v1
kind: Pod
metadata:
  name: ${name}
  namespace: ${ns}
  labels: {app: ${name}}
spec:
  terminationGracePeriodSeconds: 5
  containers:
  - name: main
    image: ${BUSYBOX}
    command: ["sh", "-c", ${JSON.stringify(command)}]
${extra}`;

describe('kubectl against the dev cluster', () => {
  let ns: string;
  before(async () => {
    ns = await freshNamespace('kubectl');
  });
  after(async () => {
    await deleteNamespace(ns);
  });

  test('get ns,pods lists the namespaces and the namespace\'s pods', async () => {
    const out = await kubectlOk(['get', 'ns,pods', '-n', ns]);
    assert.match(out, /namespace\/default\s+Active/);
    assert.match(out, new RegExp(`namespace/${ns}\\s+Active`));
  });

  test('apply -f, wait for Ready, logs -f follows until the container ends', async () => {
    const yaml = podYaml(ns, 'counter', 'for i in 1 2 3; do echo line $i; sleep 0.3; done; echo oops >&2');
    assert.match(await kubectlOk(['apply', '-f', '-'], { input: yaml }), /pod\/counter created/);
    await kubectlOk(['wait', '--for=condition=Ready', 'pod/counter', '-n', ns, '--timeout=30s']);
    const logs = await kubectlOk(['logs', '-f', 'counter', '-n', ns]);
    assert.equal(logs, 'line 1\nline 2\nline 3\noops\n');
    // apply again with a changed label: a patch of the existing object
    const changed = yaml.replace('labels: {app: counter}', 'labels: {app: counter, tier: test}');
    assert.match(await kubectlOk(['apply', '-f', '-'], { input: changed }), /pod\/counter configured/);
    assert.equal(await kubectlOk(['get', 'pod', 'counter', '-n', ns, '-o', 'jsonpath={.metadata.labels.tier}']), 'test');
  });

  test('exec -i POD -- cat passes piped stdin through and ends when it ends', async () => {
    await kubectlOk(['apply', '-f', '-'], { input: podYaml(ns, 'sleeper', 'trap "exit 0" TERM; sleep 3600 & wait') });
    await kubectlOk(['wait', '--for=condition=Ready', 'pod/sleeper', '-n', ns, '--timeout=30s']);
    const input = Array.from({ length: 2000 }, (_, i) => `row ${i}`).join('\n') + '\n';
    const r = await kubectl(['exec', '-i', 'sleeper', '-n', ns, '--', 'cat'], { input });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, input);
    const failing = await kubectl(['exec', 'sleeper', '-n', ns, '--', 'sh', '-c', 'echo to-stderr >&2; exit 7']);
    assert.equal(failing.code, 7);
    assert.equal(failing.stderr.includes('to-stderr'), true);
  });

  test('attach -i sends stdin to the container and shows its output', async () => {
    const yaml = `apiVersion: v1
kind: Pod
metadata: {name: reader, namespace: ${ns}}
spec:
  restartPolicy: Never
  containers:
  - name: main
    image: ${BUSYBOX}
    stdin: true
    stdinOnce: true
    command: ["sh", "-c", "read line; echo got:$line"]
`;
    await kubectlOk(['apply', '-f', '-'], { input: yaml });
    await kubectlOk(['wait', '--for=condition=Ready', 'pod/reader', '-n', ns, '--timeout=30s']);
    const r = await kubectl(['attach', '-i', 'reader', '-n', ns], { input: 'hello\n' });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /got:hello/);
    const pod = await waitForPod(kubeConfig(), ns, 'reader', (p) => p.status?.phase === 'Succeeded');
    assert.equal(pod.status?.containerStatuses?.[0]?.state?.terminated?.exitCode, 0);
  });

  test('run --rm -i --restart=Never exits with the container\'s exit code and removes the pod', async () => {
    const r = await kubectl(['run', 'exiter', '-n', ns, '--rm', '-i', '--restart=Never', `--image=${BUSYBOX}`, '--', 'sh', '-c', 'cat; exit 3'], { input: 'piped\n', timeoutMs: 60_000 });
    assert.equal(r.code, 3, r.stderr);
    assert.match(r.stdout, /piped/);
    const left = await kubectl(['get', 'pod', 'exiter', '-n', ns]);
    assert.equal(left.code, 1);
    assert.match(left.stderr, /pods "exiter" not found/);
  });

  test('capabilities are those containerd gives: its default set (dockerd\'s) unless the pod adds or drops', async () => {
    // the process reads its stdin to the end first, so that what it prints comes after kubectl's attach: output
    // written before the attach of a container that then ends is not on the attach on a real node either
    const readCaps = ['sh', '-c', 'cat >/dev/null; grep CapEff /proc/self/status'];
    const capEff = async (name: string, overrides?: object): Promise<string> => {
      const args = ['run', name, '-n', ns, '--rm', '-i', '--restart=Never', `--image=${BUSYBOX}`, ...(overrides ? [`--overrides=${JSON.stringify(overrides)}`] : []), '--', ...readCaps];
      const r = await kubectl(args, { timeoutMs: 60_000 });
      assert.equal(r.code, 0, r.stderr);
      return /^CapEff:\s+([0-9a-f]+)$/m.exec(r.stdout)?.[1] ?? r.stdout;
    };
    // CHOWN … AUDIT_WRITE: NET_RAW, MKNOD and AUDIT_WRITE too, which podman's own default lacks
    assert.equal(await capEff('caps-default'), '00000000a80425fb');
    const securityContext = { capabilities: { add: ['NET_ADMIN'], drop: ['CHOWN'] } };
    const spec = { spec: { containers: [{ name: 'caps-changed', image: BUSYBOX, command: readCaps, stdin: true, stdinOnce: true, securityContext }] } };
    assert.equal(await capEff('caps-changed', spec), '00000000a80435fa', 'NET_ADMIN added, CHOWN dropped');
    // a non-root process has none in effect, as on containerd (the list only bounds what it may gain)
    const asUser = { spec: { containers: [{ ...spec.spec.containers[0], name: 'caps-user', securityContext: { ...securityContext, runAsUser: 1000 } }] } };
    assert.equal(await capEff('caps-user', asUser), '0000000000000000', 'runAsUser 1000: no effective capabilities');
  });

  test('port-forward reaches a server inside a pod', async () => {
    await kubectlOk(['apply', '-f', '-'], { input: podYaml(ns, 'web', 'echo served-from-pod > /tmp/index.html; httpd -f -p 8080 -h /tmp') });
    await kubectlOk(['wait', '--for=condition=Ready', 'pod/web', '-n', ns, '--timeout=30s']);
    const pf = spawn('kubectl', ['--kubeconfig', kubeconfigPath(), 'port-forward', '-n', ns, 'pod/web', ':8080'], { stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      const port = await new Promise<number>((resolve, reject) => {
        let err = '';
        pf.stderr.on('data', (d) => (err += d));
        pf.on('exit', (code) => reject(new Error(`port-forward exited ${code}: ${err}`)));
        createInterface({ input: pf.stdout }).on('line', (line) => {
          const m = /Forwarding from 127\.0\.0\.1:(\d+) -> 8080/.exec(line);
          if (m) resolve(Number(m[1]));
        });
      });
      const get = () =>
        new Promise<string>((resolve, reject) => {
          request({ host: '127.0.0.1', port, path: '/index.html' }, (res) => {
            let body = '';
            res.on('data', (d) => (body += d)).on('end', () => resolve(body));
          }).on('error', reject).end();
        });
      // two requests at once: each is its own stream over the forward
      const [a, b] = await Promise.all([get(), get()]);
      assert.equal(a, 'served-from-pod\n');
      assert.equal(b, 'served-from-pod\n');
    } finally {
      pf.kill();
    }
  });

  test('delete waits for graceful deletion: the container gets SIGTERM and its grace period', async () => {
    await kubectlOk(['apply', '-f', '-'], { input: podYaml(ns, 'graceful', 'trap "echo got TERM; sleep 1; exit 0" TERM; while true; do sleep 0.1; done') });
    await kubectlOk(['wait', '--for=condition=Ready', 'pod/graceful', '-n', ns, '--timeout=30s']);
    const started = Date.now();
    // logs -f keeps reading while the pod terminates: the TERM trap's output proves SIGTERM arrived
    const follow = kubectl(['logs', '-f', 'graceful', '-n', ns]);
    const del = await kubectlOk(['delete', 'pod', 'graceful', '-n', ns, '--wait=true', '--timeout=60s']);
    assert.match(del, /pod "graceful" deleted/);
    assert.ok(Date.now() - started >= 1000, 'delete returned before the trap\'s 1 s of work was done');
    assert.match((await follow).stdout, /got TERM/);
    const gone = await kubectl(['get', 'pod', 'graceful', '-n', ns]);
    assert.match(gone.stderr, /not found/);
  });

  test('explain walks the OpenAPI v3 schemas of core and grouped kinds', async () => {
    const spec = await kubectlOk(['explain', 'pod.spec']);
    assert.match(spec, /FIELD: spec <PodSpec>/);
    assert.match(spec, /^ {2}containers\t<\[\]Container>$/m);
    assert.match(spec, /^ {2}terminationGracePeriodSeconds\t<integer>$/m);
    assert.match(await kubectlOk(['explain', 'pods.spec.containers.resources']), /^ {2}limits\t<map\[string\]string>$/m);
    assert.match(await kubectlOk(['explain', 'rolebinding.subjects']), /GROUP: +rbac\.authorization\.k8s\.io[\s\S]*FIELD: subjects <\[\]Subject>/);
    const typo = await kubectl(['explain', 'pod.spec.containerz']);
    assert.notEqual(typo.code, 0);
    assert.match(typo.stderr, /field "containerz" does not exist/);
  });

  test('apply --server-side is refused with the reason, creating and changing nothing (the README names the gap)', async () => {
    const cm = (value: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ssa\n  namespace: ${ns}\ndata:\n  key: ${value}\n`;
    const refused = await kubectl(['apply', '--server-side', '-f', '-'], { input: cm('first') });
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /Server-side apply not available on the server: .*does not implement server-side apply.*use client-side kubectl apply/);
    assert.match((await kubectl(['get', 'configmap', 'ssa', '-n', ns])).stderr, /not found/);
    await kubectlOk(['apply', '-f', '-'], { input: cm('first') });
    assert.equal((await kubectl(['apply', '--server-side', '-f', '-'], { input: cm('second') })).code, 1);
    assert.equal(await kubectlOk(['get', 'configmap', 'ssa', '-n', ns, '-o', 'jsonpath={.data.key}']), 'first');
  });

  test('auth can-i answers for a restricted user from its rules', async () => {
    assert.equal((await kubectl(['auth', 'can-i', 'list', 'pods', '-n', ns], { user: 'viewer' })).stdout.trim(), 'yes');
    const no = await kubectl(['auth', 'can-i', 'create', 'pods', '-n', ns], { user: 'viewer' });
    assert.equal(no.stdout.trim(), 'no');
    assert.equal(no.code, 1);
    assert.equal((await kubectl(['auth', 'can-i', 'create', 'pods/exec', '-n', ns], { user: 'viewer' })).stdout.trim(), 'no');
    const denied = await kubectl(['delete', 'pod', 'web', '-n', ns], { user: 'viewer' });
    assert.match(denied.stderr, new RegExp(`pods "web" is forbidden: User "viewer" cannot delete resource "pods" in API group "" in the namespace "${ns}"`));
  });

  test('a container that ends at once still has its Started event, after Created, as from the kubelet', async () => {
    for (const name of ['quick-1', 'quick-2', 'quick-3']) {
      await kubectlOk(['run', name, '-n', ns, `--image=${BUSYBOX}`, '--restart=Never', '--', 'true']);
    }
    for (const name of ['quick-1', 'quick-2', 'quick-3']) {
      await kubectlOk(['wait', '--for=jsonpath={.status.phase}=Succeeded', `pod/${name}`, '-n', ns, '--timeout=60s']);
      const reasons = await kubectlOk(['get', 'events', '-n', ns, '--field-selector', `involvedObject.name=${name}`, '--sort-by=.metadata.resourceVersion', '-o', 'jsonpath={.items[*].reason}']);
      assert.equal(reasons, 'Scheduled Pulled Created Started', name);
    }
  });

  test('a workingDir the image lacks is created as runc creates it: root\'s, 0755, in the image\'s filesystem or in the volume it lies in', async () => {
    const overrides = { apiVersion: 'v1', spec: { containers: [{ name: 'w', image: BUSYBOX, workingDir: '/no/such/dir', command: ['pwd'] }] } };
    await kubectlOk(['run', 'w', '-n', ns, `--image=${BUSYBOX}`, '--restart=Never', `--overrides=${JSON.stringify(overrides)}`]);
    await kubectlOk(['wait', '--for=jsonpath={.status.phase}=Succeeded', 'pod/w', '-n', ns, '--timeout=60s']);
    assert.equal(await kubectlOk(['logs', 'w', '-n', ns]), '/no/such/dir\n');

    // the init container's directory is made in the volume, where the main container finds it
    await kubectlOk(['apply', '-f', '-'], {
      input: `apiVersion: v1
kind: Pod
metadata: {name: workdirs, namespace: ${ns}}
spec:
  restartPolicy: Never
  volumes: [{name: data, emptyDir: {}}]
  initContainers:
  - {name: init, image: ${BUSYBOX}, workingDir: /data/made/here, command: ["true"], volumeMounts: [{name: data, mountPath: /data}]}
  containers:
  - name: main
    image: ${BUSYBOX}
    workingDir: /scratch/x
    command: ["sh", "-c", "pwd; stat -c '%u %g %a' . /data/made/here; echo written > f; cat f"]
    volumeMounts: [{name: data, mountPath: /data}]
`,
    });
    await kubectlOk(['wait', '--for=jsonpath={.status.phase}=Succeeded', 'pod/workdirs', '-n', ns, '--timeout=60s']);
    assert.equal(await kubectlOk(['logs', 'workdirs', '-n', ns]), '/scratch/x\n0 0 755\n0 0 755\nwritten\n');
    const warnings = await kubectlOk(['get', 'events', '-n', ns, '--field-selector', 'type=Warning', '-o', 'jsonpath={range .items[*]}{.involvedObject.name} {.reason}{"\\n"}{end}']);
    assert.doesNotMatch(warnings, /^(w|workdirs) /m, 'no failed start before the one that worked');
  });

  test('get pods --watch streams changes as they happen', async () => {
    const watcher = spawn('kubectl', ['--kubeconfig', kubeconfigPath(), 'get', 'pods', '-n', ns, '--watch', '--output-watch-events', '-l', 'app=watched'], { stdio: ['ignore', 'pipe', 'pipe'] });
    const lines: string[] = [];
    const seen = (re: RegExp) =>
      new Promise<void>((resolve, reject) => {
        const check = () => lines.some((l) => re.test(l));
        if (check()) return resolve();
        const timer = setTimeout(() => reject(new Error(`no watch line matched ${re}; got:\n${lines.join('\n')}`)), 30_000);
        rl.on('line', () => {
          if (check()) {
            clearTimeout(timer);
            resolve();
          }
        });
      });
    const rl = createInterface({ input: watcher.stdout });
    rl.on('line', (l) => lines.push(l));
    try {
      await kubectlOk(['apply', '-f', '-'], { input: podYaml(ns, 'watched', 'sleep 0.5; exit 0') });
      await seen(/ADDED\s+watched\s+0\/1\s+\S+/);
      await seen(/MODIFIED\s+watched\s+.*Completed/);
      await kubectlOk(['delete', 'pod', 'watched', '-n', ns]);
      await seen(/DELETED\s+watched/);
    } finally {
      watcher.kill();
    }
  });
});
