// berth serve where CI runs it: the pod Tekton makes of deploy/tekton's Task, and the pod GitLab's Kubernetes
// executor makes from deploy/gitlab's config.toml, each with localhost/berth/berth:dev as the sidecar (as the
// ServiceAccount the recipe binds to exactly deploy/rbac/serve-role.yaml) and the real docker CLI in the step.
// The step runs a docker scenario (run with an exit code, exec, logs, a file copy, a published port reached
// by pod IP); berth's containers are pods of the same namespace, and deleting the CI pod leaves nothing behind
// (berth's SIGTERM handling within the pod's grace period).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Pod } from '@kubernetes/client-node';
import { deleteNamespace, freshNamespace, kubeConfig, kubectlOk, waitForPod } from '../harness/cluster.js';
import { eventually } from '../../util/eventually.js';
import {
  BERTH_IMAGE,
  RECIPE_IMAGE,
  TOOLS_IMAGE,
  apply,
  berthObjects,
  containerLog,
  notServed,
  podFromGitlabConfig,
  podFromTask,
  recipeFile,
  renderRecipe,
  replaceImage,
  served,
  servesServiceAccountTokens,
} from './recipes-env.js';

/** What the CI step runs: the docker CLI (the real one, /opt/tools/docker) against berth on the pod's loopback. */
const SCENARIO = `
D=/opt/tools/docker
i=0; until $D version >/dev/null 2>&1; do i=$((i+1)); [ $i -gt 300 ] && { echo "berth serve did not answer"; exit 1; }; busybox sleep 0.2; done
$D run --rm localhost/berth/busybox:1 sh -c 'echo run-ok; exit 3'; echo "run-exit=$?"
$D run -d --name web -p 8080 localhost/berth/busybox:1 sh -c 'mkdir -p /www && echo served-ok >/www/index.html && echo log-ok && exec httpd -f -p 8080 -h /www' >/dev/null
$D exec web sh -c 'echo exec-ok; exit 4'; echo "exec-exit=$?"
echo copied-ok >/tmp/f.txt && $D cp /tmp/f.txt web:/tmp/f.txt && $D exec web cat /tmp/f.txt
hp=$($D port web 8080/tcp | busybox head -n 1)
busybox wget -qO- "http://$hp/"
$D logs web
$D network create ci-net >/dev/null
$D run -d --name db --network ci-net --network-alias database localhost/berth/busybox:1 sh -c 'mkdir -p /www && echo alias-ok >/www/index.html && exec httpd -f -p 8081 -h /www' >/dev/null
i=0; until $D run --rm --network ci-net localhost/berth/busybox:1 wget -qO- http://database:8081/; do i=$((i+1)); [ $i -gt 3 ] && break; busybox sleep 1; done
echo scenario-done
`;

const EXPECTED = ['run-ok', 'run-exit=3', 'exec-ok', 'exec-exit=4', 'copied-ok', 'served-ok', 'log-ok', 'alias-ok', 'scenario-done', 'scenario-exit=0'];

/**
 * The step stays up after the scenario (as GitLab's build container does, which runs the job's script through
 * exec) until the pod is deleted: the pod's deletion is what berth sees.
 */
const stepScript = (scenario: string) => `(${scenario}); echo "scenario-exit=$?"\ntrap 'exit 0' TERM; while :; do busybox sleep 1 & wait; done\n`;

/** Runs the CI pod until its step ended, checks the scenario and berth's pods, deletes it, checks nothing is left. */
async function runCiPod(ns: string, pod: V1Pod, step: string, sidecar: string, checkBerthPods: (pods: V1Pod[]) => void = () => undefined): Promise<void> {
  await kubectlOk(['apply', '-n', ns, '-f', '-'], { input: JSON.stringify(pod) });
  const name = pod.metadata!.name!;
  try {
    await waitForPod(kubeConfig(), ns, name, (p) => p.status?.phase === 'Running', 60_000);
    const log = await eventually(
      `the scenario in pod ${name} ends`,
      async () => {
        const text = await containerLog(ns, name, step);
        return text.includes('scenario-exit=') ? text : undefined;
      },
      { timeoutMs: 100_000, intervalMs: 500 },
    );
    const berthLog = await containerLog(ns, name, sidecar);
    for (const line of EXPECTED) assert.ok(log.split('\n').includes(line), `"${line}" missing from the step's output:\n${log}\nberth log:\n${berthLog}`);
    const berthPods = JSON.parse(await kubectlOk(['get', 'pods', '-n', ns, '-l', 'app.kubernetes.io/managed-by=berth', '-o', 'json'])).items as V1Pod[];
    assert.ok(berthPods.length >= 1, `the container web is a pod of namespace ${ns}`);
    checkBerthPods(berthPods);
  } catch (err) {
    await kubectlOk(['delete', 'pod', '-n', ns, name, '--wait=true', '--timeout=90s'], { timeoutMs: 100_000 });
    throw err;
  }
  const berthLog = await deleteReadingLog(ns, name, sidecar);
  // berth's SIGTERM cleanup runs within the pod's grace period, while the pod still has its network
  await eventually('berth deleted its pods when its own pod was deleted', async () => ((await berthObjects(ns)).length === 0 ? true : undefined), {
    timeoutMs: 30_000,
  }).catch((err: Error) => {
    throw new Error(`${err.message}\nberth's log while its pod was deleted:\n${berthLog}`);
  });
  assert.match(berthLog, /stopping, deleting what this instance created/);
}

/** Deletes the pod, reading its container's log meanwhile (a deleted pod's log is gone): berth's last words. */
async function deleteReadingLog(ns: string, name: string, container: string): Promise<string> {
  let log = '';
  let deleted = false;
  const deleting = kubectlOk(['delete', 'pod', '-n', ns, name, '--wait=true', '--timeout=90s'], { timeoutMs: 100_000 }).finally(() => (deleted = true));
  while (!deleted) {
    const now = await containerLog(ns, name, container).catch(() => '');
    if (now.length > log.length && !/NotFound|not found/.test(now)) log = now;
    await new Promise((r) => setTimeout(r, 200));
  }
  await deleting;
  return log;
}

let identityNs: string; // where the ServiceAccount identity check runs
let identity = false;
const namespaces: string[] = [];
/** a namespace of its own per CI pod: what one berth left never counts against the other */
async function namespaceFor(prefix: string): Promise<string> {
  const ns = await freshNamespace(prefix);
  namespaces.push(ns);
  return ns;
}
before(async () => {
  identityNs = await namespaceFor('sidecar-identity');
  identity = await servesServiceAccountTokens(identityNs);
});
after(async () => {
  for (const ns of namespaces) await deleteNamespace(ns);
});

describe('berth serve as a sidecar', () => {
  test('Tekton: the Task pod runs a docker scenario through berth serve, containers as sibling pods by pod IP', async () => {
    if (!identity) assert.fail('the dev cluster gives pods no ServiceAccount identity: berth in a pod cannot call the API');
    const ns = await namespaceFor('sidecar-tekton');
    const docs = await renderRecipe('tekton');
    await apply(served(docs), ns);
    const task = replaceImage(notServed(docs)[0]!, RECIPE_IMAGE, BERTH_IMAGE);
    const pod = podFromTask(task, { name: 'tekton-run', serviceAccount: 'berth-serve', params: { image: TOOLS_IMAGE, script: stepScript(SCENARIO) } });
    await runCiPod(ns, pod, 'test', 'berth');
  });

  test("GitLab: the job pod of config.toml, berth serve as a service; its pods inherit the job pod's tolerations, node selector and pull secrets", async () => {
    if (!identity) assert.fail('the dev cluster gives pods no ServiceAccount identity: berth in a pod cannot call the API');
    const ns = await namespaceFor('sidecar-gitlab');
    await apply(await renderRecipe('gitlab'), ns);
    await kubectlOk([
      'create',
      'secret',
      'docker-registry',
      'ci-registry',
      '-n',
      ns,
      '--docker-server=registry.example.com',
      '--docker-username=u',
      '--docker-password=p',
    ]);
    const node = JSON.parse(await kubectlOk(['get', 'nodes', '-o', 'json'])).items[0];
    const os = node.metadata.labels['kubernetes.io/os'];
    const pod = podFromGitlabConfig(recipeFile('gitlab', 'config.toml'), {
      name: 'gitlab-job',
      buildImage: TOOLS_IMAGE,
      script: stepScript(SCENARIO),
      serviceImage: BERTH_IMAGE,
    });
    const toleration = { key: 'dedicated', operator: 'Equal', value: 'ci', effect: 'NoSchedule' };
    pod.spec = {
      ...pod.spec!,
      nodeSelector: os ? { 'kubernetes.io/os': os } : undefined,
      tolerations: [toleration],
      imagePullSecrets: [{ name: 'ci-registry' }],
    };
    await runCiPod(ns, pod, 'build', 'svc-0', (pods) => {
      for (const p of pods) {
        assert.deepEqual(p.spec!.imagePullSecrets, [{ name: 'ci-registry' }], `${p.metadata!.name} inherits the pull secrets`);
        assert.ok(
          p.spec!.tolerations?.some((x) => x.key === 'dedicated' && x.value === 'ci'),
          `${p.metadata!.name} inherits the toleration`,
        );
        if (os) assert.equal(p.spec!.nodeSelector?.['kubernetes.io/os'], os, `${p.metadata!.name} inherits the node selector`);
        assert.notEqual(p.spec!.automountServiceAccountToken, true, 'no token for the containers berth starts');
      }
    });
  });
});
