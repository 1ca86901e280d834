// kubectl debug --copy-to: kubectl sends the copy as a protobuf Pod, which must arrive whole (embedded volume
// sources, probes, quantities, a false shareProcessNamespace) and run. Ephemeral containers are refused.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { BUSYBOX, deleteNamespace, freshNamespace, kubectl, kubectlOk } from '../harness/cluster.js';

const original = (ns: string) => `apiVersion: v1
kind: Pod
metadata: {name: box, namespace: ${ns}, labels: {app: box}}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: main
    image: ${BUSYBOX}
    command: ["sh", "-c", "trap 'exit 0' TERM; sleep 3600 & wait"]
    env: [{name: GREETING, value: hello}]
    resources: {limits: {cpu: 500m, memory: 64Mi}}
    readinessProbe: {exec: {command: ["true"]}, periodSeconds: 5}
    volumeMounts: [{name: scratch, mountPath: /scratch}]
  volumes: [{name: scratch, emptyDir: {}}]
`;

describe('kubectl debug --copy-to', () => {
  let ns: string;
  before(async () => {
    ns = await freshNamespace('debug');
    await kubectlOk(['apply', '-f', '-'], { input: original(ns) });
    await kubectlOk(['wait', '--for=condition=Ready', 'pod/box', '-n', ns, '--timeout=60s']);
  });
  after(async () => {
    await deleteNamespace(ns);
  });

  test('the copy has the original spec plus the debug container, and runs', async () => {
    await kubectlOk(['debug', 'box', '-n', ns, '--copy-to=box-copy', '--share-processes=false', '--container=debugger', `--image=${BUSYBOX}`, '--', 'sleep', '600']);
    const copy = JSON.parse(await kubectlOk(['get', 'pod', 'box-copy', '-n', ns, '-o', 'json']));
    const main = copy.spec.containers.find((c: { name: string }) => c.name === 'main');
    assert.deepEqual(main.resources.limits, { cpu: '500m', memory: '64Mi' });
    assert.deepEqual(main.readinessProbe.exec, { command: ['true'] });
    assert.deepEqual(main.env, [{ name: 'GREETING', value: 'hello' }]);
    // the original's kube-api-access volume comes along, and the ServiceAccount admission plugin mounts that same
    // volume into the debug container rather than adding a second one, as a real server does
    const box = JSON.parse(await kubectlOk(['get', 'pod', 'box', '-n', ns, '-o', 'json']));
    const tokenVolume = box.spec.volumes.find((v: { name: string }) => v.name.startsWith('kube-api-access-'));
    assert.ok(tokenVolume, JSON.stringify(box.spec.volumes));
    assert.deepEqual(copy.spec.volumes, [{ name: 'scratch', emptyDir: {} }, tokenVolume]);
    for (const c of copy.spec.containers) {
      assert.deepEqual(c.volumeMounts.filter((m: { name: string }) => m.name === tokenVolume.name), [
        { name: tokenVolume.name, readOnly: true, mountPath: '/var/run/secrets/kubernetes.io/serviceaccount' },
      ]);
    }
    assert.equal(copy.spec.shareProcessNamespace, false);
    assert.deepEqual(copy.spec.containers.map((c: { name: string }) => c.name), ['main', 'debugger']);
    await kubectlOk(['wait', '--for=condition=Ready', 'pod/box-copy', '-n', ns, '--timeout=60s']);
    assert.equal(await kubectlOk(['exec', 'box-copy', '-n', ns, '-c', 'main', '--', 'sh', '-c', 'echo $GREETING']), 'hello\n');
  });

  test('an ephemeral container is refused with kubectl\'s own sentence and leaves the pod as it was (the README names the gap)', async () => {
    const r = await kubectl(['debug', 'box', '-n', ns, '--profile=general', `--image=${BUSYBOX}`, '--', 'true']);
    assert.notEqual(r.code, 0);
    // the pods/ephemeralcontainers subresource is not served (404), which kubectl reads as the feature being off
    assert.match(r.stderr, /ephemeral containers are disabled for this cluster/);
    const box = JSON.parse(await kubectlOk(['get', 'pod', 'box', '-n', ns, '-o', 'json']));
    assert.equal(box.spec.ephemeralContainers, undefined);
  });
});
