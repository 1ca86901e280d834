// Pod deletion as kubectl and the Python client use it: a second DELETE with a shorter grace period (`kubectl
// delete --now` after a plain delete) ends the pod sooner, as the kubelet does, and a negative grace period is
// taken as 1 s, as the pod strategy does, not as an immediate removal.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { eventually } from '../../util/eventually.js';
import { BUSYBOX, contextFor, deleteNamespace, freshNamespace, kubeconfigPath, kubectl, kubectlOk, runCommand } from '../harness/cluster.js';

const PYTHON = '/usr/bin/python3';

const stubbornPod = (ns: string, name: string) => `apiVersion: v1
kind: Pod
metadata: {name: ${name}, namespace: ${ns}}
spec:
  terminationGracePeriodSeconds: 120
  containers:
  - name: main
    image: ${BUSYBOX}
    command: ["sh", "-c", "trap 'echo ignoring TERM' TERM; while true; do sleep 0.2; done"]
`;

describe('graceful pod deletion through kubectl and the Python client', () => {
  let ns: string;
  before(async () => {
    ns = await freshNamespace('delete');
  });
  after(async () => {
    await deleteNamespace(ns);
  });

  test('delete --now after a plain delete shortens the grace period: the pod is gone within seconds, not 120 s', async () => {
    await kubectlOk(['apply', '-f', '-'], { input: stubbornPod(ns, 'stubborn') });
    await kubectlOk(['wait', '--for=condition=Ready', 'pod/stubborn', '-n', ns, '--timeout=30s']);
    await kubectlOk(['delete', 'pod', 'stubborn', '-n', ns, '--wait=false']);
    assert.equal(await kubectlOk(['get', 'pod', 'stubborn', '-n', ns, '-o', 'jsonpath={.metadata.deletionGracePeriodSeconds}']), '120');
    const started = Date.now();
    // before: the node kept the first grace period, and this waited the full 120 s
    const now = await kubectl(['delete', 'pod', 'stubborn', '-n', ns, '--now', '--timeout=30s'], { timeoutMs: 40_000 });
    assert.equal(now.code, 0, now.stderr);
    assert.ok(Date.now() - started < 15_000, `delete --now took ${Date.now() - started} ms`);
    assert.match((await kubectl(['get', 'pod', 'stubborn', '-n', ns])).stderr, /not found/);
  });

  test('a negative gracePeriodSeconds (python delete_namespaced_pod) is a 1 s grace period', async () => {
    await kubectlOk(['apply', '-f', '-'], { input: stubbornPod(ns, 'negative') });
    await kubectlOk(['wait', '--for=condition=Ready', 'pod/negative', '-n', ns, '--timeout=30s']);
    const script = `
import sys
from kubernetes import client, config
config.load_kube_config(config_file=sys.argv[1], context=sys.argv[2])
pod = client.CoreV1Api().delete_namespaced_pod("negative", sys.argv[3], grace_period_seconds=-5)
print(pod.metadata.deletion_grace_period_seconds)
`;
    const r = await runCommand(PYTHON, ['-c', script, kubeconfigPath(), contextFor('admin'), ns]);
    assert.equal(r.code, 0, r.stderr);
    // before: 0, and the pod was removed at once without a grace period
    assert.equal(r.stdout.trim(), '1');
    await kubectlOk(['wait', '--for=delete', 'pod/negative', '-n', ns, '--timeout=20s']);
  });

  test('a force delete records the kubelet\'s Killing event for the running container, as a graceful one does', async () => {
    await kubectlOk(['apply', '-f', '-'], { input: stubbornPod(ns, 'forced') });
    await kubectlOk(['wait', '--for=condition=Ready', 'pod/forced', '-n', ns, '--timeout=30s']);
    const uid = await kubectlOk(['get', 'pod', 'forced', '-n', ns, '-o', 'jsonpath={.metadata.uid}']);
    const forced = await kubectl(['delete', 'pod', 'forced', '-n', ns, '--grace-period=0', '--force']);
    assert.equal(forced.code, 0, forced.stderr);
    // before: the node removed the container without a word
    const killing = await eventually('the Killing event of the force-deleted pod', async () => {
      const events = JSON.parse(await kubectlOk(['get', 'events', '-n', ns, '--field-selector', 'involvedObject.name=forced,reason=Killing', '-o', 'json']));
      return events.items[0];
    });
    assert.deepEqual(
      [killing.type, killing.message, killing.source.component, killing.involvedObject.uid, killing.involvedObject.fieldPath],
      ['Normal', 'Stopping container main', 'kubelet', uid, 'spec.containers{main}'],
    );
  });
});
