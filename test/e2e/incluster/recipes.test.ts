// The recipes of deploy/ as a user applies them: every kustomization builds; what the dev cluster serves is
// applied for real (kubectl's Strict field validation: a misspelt field fails); what it does not serve (Tekton's
// Task, the CronJob, Argo CD's repo-server patch) is checked through the pod it would make, sent to the server
// with --dry-run=server. The gc CronJob's pod then runs, as its own ServiceAccount under its own Role, and
// collects an expired berth object.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync, copyFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import YAML from 'yaml';
import { deleteNamespace, freshNamespace, kubeConfig, kubectl, kubectlOk, runCommand, waitForPod } from '../harness/cluster.js';
import {
  BERTH_IMAGE,
  RECIPE_IMAGE,
  apply,
  containerLog,
  gitlabRunnerConfig,
  notServed,
  podFromCronJob,
  podFromGitlabConfig,
  podFromTask,
  recipeDir,
  recipeFile,
  renderRecipe,
  replaceImage,
  served,
  servesServiceAccountTokens,
  type Doc,
} from './recipes-env.js';

const byKind = (docs: Doc[]) => docs.map((d) => `${d.kind}/${d.metadata.namespace ? `${d.metadata.namespace}/` : ''}${d.metadata.name}`).sort();
const shimRole = YAML.parse(recipeFile('rbac', 'shim-role.yaml'));
const serveRole = YAML.parse(recipeFile('rbac', 'serve-role.yaml'));
const finished = (p: { status?: { phase?: string } }) => p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed';

let ns: string;
before(async () => {
  ns = await freshNamespace('recipes');
});
after(async () => {
  await deleteNamespace(ns);
});

describe('deploy/tekton', () => {
  test('a Task, its ServiceAccount, exactly serve-role.yaml and the binding; applied, and the Task pod passes the server', async () => {
    const docs = await renderRecipe('tekton');
    assert.deepEqual(byKind(docs), ['Role/berth-serve', 'RoleBinding/berth-serve', 'ServiceAccount/berth-serve', 'Task/berth-docker-test']);
    assert.deepEqual(docs.find((d) => d.kind === 'Role')!.rules, serveRole.rules, 'the Role is deploy/rbac/serve-role.yaml');
    await apply(served(docs), ns);
    const [task] = notServed(docs);
    assert.equal(task!.apiVersion, 'tekton.dev/v1');
    const pod = podFromTask(task!, { name: 'tekton-dry-run', serviceAccount: 'berth-serve' });
    const sidecar = pod.spec!.containers[0]!;
    assert.deepEqual(sidecar.args, ['serve', '-H', 'tcp://127.0.0.1:2375', '--port-mode', 'direct', '--instance', 'tekton-dry-run']);
    assert.deepEqual(
      pod.spec!.containers[1]!.env!.find((e) => e.name === 'DOCKER_HOST'),
      { name: 'DOCKER_HOST', value: 'tcp://127.0.0.1:2375' },
    );
    await kubectlOk(['apply', '-n', ns, '--dry-run=server', '-f', '-'], { input: JSON.stringify(pod) });
  });
});

describe('deploy/gitlab', () => {
  test('ServiceAccount, serve-role.yaml and binding applied; config.toml and the Helm values agree; the job pod passes the server', async () => {
    const docs = await renderRecipe('gitlab');
    assert.deepEqual(byKind(docs), ['Role/berth-serve', 'RoleBinding/berth-serve', 'ServiceAccount/berth-serve']);
    assert.deepEqual(docs.find((d) => d.kind === 'Role')!.rules, serveRole.rules);
    await kubectlOk(['apply', '-n', ns, '-k', recipeDir('gitlab'), '--dry-run=server']); // literally as a user applies it
    await apply(docs, ns);
    const toml = recipeFile('gitlab', 'config.toml');
    const config = gitlabRunnerConfig(toml);
    assert.equal(config.serviceAccount, 'berth-serve');
    assert.ok(config.environment.includes('DOCKER_HOST=tcp://127.0.0.1:2375'));
    assert.equal(config.serviceImage, RECIPE_IMAGE);
    const values = YAML.parse(recipeFile('gitlab', 'values.yaml'));
    assert.deepEqual(gitlabRunnerConfig(values.runners.config), config, 'values.yaml carries the same runner config as config.toml');
    const pod = podFromGitlabConfig(toml, {
      name: 'gitlab-dry-run',
      buildImage: 'docker.io/library/docker:28-cli',
      script: 'docker version',
      serviceImage: config.serviceImage,
    });
    await kubectlOk(['apply', '-n', ns, '--dry-run=server', '-f', '-'], { input: JSON.stringify(pod) });
  });
});

describe('deploy/argocd', () => {
  test('the functions namespace, exactly shim-role.yaml bound to the repo-server, the plugin ConfigMap; applied', async () => {
    const docs = await renderRecipe('argocd');
    assert.deepEqual(byKind(docs), [
      'ConfigMap/argocd/berth-cmp-plugin',
      'Namespace/argocd-krm-fns',
      'Role/argocd-krm-fns/berth-shim',
      'RoleBinding/argocd-krm-fns/berth-shim-argocd-repo-server',
    ]);
    assert.deepEqual(docs.find((d) => d.kind === 'Role')!.rules, shimRole.rules, 'the Role is deploy/rbac/shim-role.yaml');
    assert.deepEqual(docs.find((d) => d.kind === 'RoleBinding')!.subjects, [{ kind: 'ServiceAccount', name: 'argocd-repo-server', namespace: 'argocd' }]);
    const plugin = YAML.parse(docs.find((d) => d.kind === 'ConfigMap')!.data['plugin.yaml']);
    assert.equal(plugin.kind, 'ConfigManagementPlugin');
    assert.deepEqual(plugin.spec.generate.command, ['kustomize', 'build', '--enable-alpha-plugins', '.']);
    const hadArgocd = (await kubectl(['get', 'namespace', 'argocd'])).code === 0;
    if (!hadArgocd) await kubectlOk(['create', 'namespace', 'argocd']);
    try {
      await apply(docs);
      await kubectlOk(['auth', 'can-i', 'create', 'pods/attach', '-n', 'argocd-krm-fns', '--as', 'system:serviceaccount:argocd:argocd-repo-server']);
      const elsewhere = await kubectl(['auth', 'can-i', 'create', 'pods', '-n', 'argocd', '--as', 'system:serviceaccount:argocd:argocd-repo-server']);
      assert.equal(elsewhere.stdout.trim(), 'no', 'the repo-server may run pods in argocd-krm-fns only');
    } finally {
      await kubectl(['delete', 'namespace', 'argocd-krm-fns', '--wait=true', '--timeout=60s']);
      if (!hadArgocd) await kubectl(['delete', 'namespace', 'argocd', '--wait=true', '--timeout=60s']);
    }
  });

  test('repo-server-patch.yaml laid on a repo-server Deployment: the sidecar pod passes the server', async () => {
    // An Argo CD install kustomization as a user writes one, with a stand-in for Argo CD's repo-server.
    const dir = mkdtempSync(join(tmpdir(), 'berth-argocd-'));
    try {
      copyFileSync(join(recipeDir('argocd'), 'repo-server-patch.yaml'), join(dir, 'repo-server-patch.yaml'));
      writeFileSync(
        join(dir, 'repo-server.yaml'),
        YAML.stringify({
          apiVersion: 'apps/v1',
          kind: 'Deployment',
          metadata: { name: 'argocd-repo-server', namespace: 'argocd' },
          spec: {
            selector: { matchLabels: { app: 'repo' } },
            template: {
              metadata: { labels: { app: 'repo' } },
              spec: {
                serviceAccountName: 'argocd-repo-server',
                automountServiceAccountToken: false,
                initContainers: [
                  {
                    name: 'copyutil',
                    image: 'quay.io/argoproj/argocd:v3.1.0',
                    command: ['/bin/cp', '-n', '/usr/local/bin/argocd', '/var/run/argocd/argocd-cmp-server'],
                    volumeMounts: [{ name: 'var-files', mountPath: '/var/run/argocd' }],
                  },
                ],
                containers: [
                  {
                    name: 'argocd-repo-server',
                    image: 'quay.io/argoproj/argocd:v3.1.0',
                    volumeMounts: [
                      { name: 'var-files', mountPath: '/var/run/argocd' },
                      { name: 'plugins', mountPath: '/home/argocd/cmp-server/plugins' },
                    ],
                  },
                ],
                volumes: [
                  { name: 'var-files', emptyDir: {} },
                  { name: 'plugins', emptyDir: {} },
                ],
              },
            },
          },
        }),
      );
      writeFileSync(
        join(dir, 'kustomization.yaml'),
        `resources:\n  - repo-server.yaml\n  - ${relative(dir, recipeDir('argocd'))}\npatches:\n  - path: repo-server-patch.yaml\n`,
      );
      const r = await runCommand('kubectl', ['kustomize', dir]);
      assert.equal(r.code, 0, r.stderr);
      const deployment = YAML.parseAllDocuments(r.stdout)
        .map((d) => d.toJSON())
        .find((d) => d.kind === 'Deployment');
      const spec = deployment.spec.template.spec;
      assert.deepEqual(
        spec.containers.map((c: Doc) => c.name),
        ['berth-cmp', 'argocd-repo-server'],
      );
      assert.deepEqual(
        spec.initContainers.map((c: Doc) => c.name),
        ['berth-kustomize', 'copyutil'],
      );
      const sidecar = spec.containers[0];
      assert.deepEqual(sidecar.command, ['/var/run/argocd/argocd-cmp-server']);
      assert.equal(sidecar.securityContext.runAsUser, 999);
      assert.ok(
        sidecar.volumeMounts.some((m: Doc) => m.mountPath === '/var/run/secrets/kubernetes.io/serviceaccount'),
        'the token reaches the sidecar',
      );
      assert.ok(!spec.containers[1].volumeMounts.some((m: Doc) => m.name === 'berth-token'), 'and not the repo-server');
      const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'repo-server-dry-run' }, spec: { ...spec, serviceAccountName: 'default' } };
      await kubectlOk(['apply', '-n', ns, '--dry-run=server', '-f', '-'], { input: JSON.stringify(pod) });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('deploy/gc', () => {
  test("its own Role (list and delete only) and a CronJob whose --kinds are the Role's; the CronJob pod passes the server", async () => {
    const docs = await renderRecipe('gc');
    assert.deepEqual(byKind(docs), ['CronJob/berth-gc', 'Role/berth-gc', 'RoleBinding/berth-gc', 'ServiceAccount/berth-gc']);
    const role = docs.find((d) => d.kind === 'Role')!;
    const resources = role.rules.flatMap((r: Doc) => r.resources).sort();
    assert.deepEqual([...new Set(role.rules.flatMap((r: Doc) => r.verbs))].sort(), ['delete', 'list']);
    const cronJob = docs.find((d) => d.kind === 'CronJob')!;
    const args: string[] = cronJob.spec.jobTemplate.spec.template.spec.containers[0].args;
    assert.deepEqual(args[args.indexOf('--kinds') + 1]!.split(',').sort(), resources, '--kinds names exactly what the Role lets gc list');
    await apply(served(docs), ns);
    await kubectlOk(['apply', '-n', ns, '--dry-run=server', '-f', '-'], { input: JSON.stringify(podFromCronJob(cronJob, 'gc-dry-run')) });
  });

  test('the CronJob pod, as berth-gc, deletes an expired berth object of its namespace and nothing else', async () => {
    if (!(await servesServiceAccountTokens(ns))) assert.fail('the dev cluster gives pods no ServiceAccount identity: berth in a pod cannot call the API');
    const docs = await renderRecipe('gc');
    await apply(served(docs), ns);
    const labels = { 'app.kubernetes.io/managed-by': 'berth', 'berth.dev/owner': 'recipes-test' };
    const cm = (name: string, expires: string) => ({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name, labels, annotations: { 'berth.dev/expires-at': expires } },
      data: {},
    });
    await apply([cm('expired', '2000-01-01T00:00:00Z'), cm('fresh', '2999-01-01T00:00:00Z')], ns);
    const pod = replaceImage(
      podFromCronJob(
        docs.find((d) => d.kind === 'CronJob')!,
        'gc-run',
      ),
      RECIPE_IMAGE,
      BERTH_IMAGE,
    );
    await kubectlOk(['apply', '-n', ns, '-f', '-'], { input: JSON.stringify(pod) });
    const done = await waitForPod(kubeConfig(), ns, 'gc-run', finished, 60_000);
    const log = await containerLog(ns, 'gc-run', 'gc');
    assert.equal(done.status!.phase, 'Succeeded', log);
    assert.match(log, new RegExp(`ConfigMap/expired \\(namespace ${ns}\\) deleted`));
    const left = (await kubectlOk(['get', 'configmaps', '-n', ns, '-l', 'app.kubernetes.io/managed-by=berth', '-o', 'name'])).split('\n').filter(Boolean);
    assert.deepEqual(left, ['configmap/fresh']);
    await kubectlOk(['delete', 'pod', '-n', ns, 'gc-run', '--wait=true']);
  });
});
