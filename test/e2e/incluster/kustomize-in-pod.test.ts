// The Argo CD recipe's rendering, in a pod: the berth-cmp sidecar of deploy/argocd/repo-server-patch.yaml (its
// env, security context, /tmp and the projected token of the repo-server's ServiceAccount) runs the generate
// command of deploy/argocd/plugin.yaml on a kustomization with a transformer, a generator and a validator. The
// ServiceAccount is bound to exactly deploy/rbac/shim-role.yaml in the functions' namespace (the recipe's
// RoleBinding), and the functions run as pods there. The output is byte for byte that of the same build run
// outside the cluster with podman as `docker`; a failing validator fails the build inside too.
// argocd-cmp-server itself is not run (it is Argo CD's); /opt/kustomize/kustomize answers `kustomize build`, and
// the container stays up after rendering, as the sidecar does, so that the shim agent (BERTH_SHIM_AGENT=1 in the
// patch) deletes each function's pod after answering; its warm pods are drained with `berth shim pool drain`.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Container, V1Pod, V1Volume } from '@kubernetes/client-node';
import YAML from 'yaml';
import { deleteNamespace, freshNamespace, kubeConfig, kubectlOk, runCommand, waitForPod } from '../harness/cluster.js';
import { REFERENCE_DIR, tempTree } from '../shim/shim-env.js';
import { eventually } from '../../util/eventually.js';
import { TOOLS_IMAGE, apply, berthObjects, containerLog, recipeFile, renderRecipe, servesServiceAccountTokens, type Doc } from './recipes-env.js';

const fn = (image: string) => `config.kubernetes.io/function: |\n      container:\n        image: localhost/berth/krm-${image}:1`;
const fnConfig = (name: string, annotation: string, data: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n  annotations:\n    ${annotation}\ndata: ${data}\n`;
const PACKAGE: Record<string, string> = {
  'service.yaml': 'apiVersion: v1\nkind: Service\nmetadata:\n  name: cart\n  labels: {team: shop}\nspec:\n  ports: [{port: 80}]\n',
  'annotate.yaml': fnConfig('annotate', fn('set-annotations'), '{owner: berth-e2e, stage: argocd}'),
  'generate.yaml': fnConfig('generate', fn('generate-configmap'), '{name: generated-settings, color: blue}'),
  'validate.yaml': fnConfig('validate', fn('require-label'), '{label: team, kinds: Service}'),
  'kustomization.yaml': 'resources: [service.yaml]\ngenerators: [generate.yaml]\ntransformers: [annotate.yaml]\nvalidators: [validate.yaml]\n',
};
const FAILING: Record<string, string> = {
  ...PACKAGE,
  'orphan.yaml': 'apiVersion: v1\nkind: Service\nmetadata:\n  name: orphan\nspec:\n  ports: [{port: 81}]\n',
  'kustomization.yaml': PACKAGE['kustomization.yaml']!.replace('[service.yaml]', '[service.yaml, orphan.yaml]'),
};

const STDERR_MARK = '---berth-test-stderr---';
const EXIT_MARK = '---berth-test-exit=';

let argocdNs: string;
let fnNs: string;
let generate: string[];
let sidecar: V1Container;
let volumes: Doc[];

before(async () => {
  argocdNs = await freshNamespace('argocd');
  fnNs = await freshNamespace('argocd-fns');
  if (!(await servesServiceAccountTokens(argocdNs))) return;
  // The recipe's objects, moved from argocd / argocd-krm-fns to this test's namespaces.
  const docs = (await renderRecipe('argocd'))
    .filter((d) => d.kind !== 'Namespace')
    .map((d) => {
      const moved = JSON.parse(
        JSON.stringify(d).replaceAll('"namespace":"argocd-krm-fns"', `"namespace":"${fnNs}"`).replaceAll('"namespace":"argocd"', `"namespace":"${argocdNs}"`),
      );
      return moved as Doc;
    });
  await kubectlOk(['create', 'serviceaccount', 'argocd-repo-server', '-n', argocdNs]);
  await apply(docs);
  generate = YAML.parse(recipeFile('argocd', 'plugin.yaml')).spec.generate.command;
  const patch = YAML.parse(recipeFile('argocd', 'repo-server-patch.yaml'));
  sidecar = patch.spec.template.spec.containers.find((c: Doc) => c.name === 'berth-cmp');
  volumes = patch.spec.template.spec.volumes;
});
after(async () => {
  await deleteNamespace(argocdNs);
  await deleteNamespace(fnNs);
});

/** The sidecar as the patch makes it, rendering `files` with the plugin's generate command. */
function renderPod(name: string, files: Record<string, string>, configMap: string): V1Pod {
  const env = sidecar.env!.map((e) => {
    if (e.name === 'PATH') return { ...e, value: e.value!.replace('/berth-tools', '/opt/kustomize') };
    if (e.name === 'BERTH_NAMESPACE') return { ...e, value: fnNs };
    return e;
  });
  const keep = new Set(['berth-cmp-tmp', 'berth-token']);
  const quoted = generate.map((a) => `'${a}'`).join(' ');
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name },
    spec: {
      serviceAccountName: 'argocd-repo-server',
      automountServiceAccountToken: false, // as Argo CD's repo-server: the token comes only through the patch's volume
      restartPolicy: 'Never',
      terminationGracePeriodSeconds: 2,
      containers: [
        {
          ...sidecar,
          image: TOOLS_IMAGE,
          env: [...env, { name: 'BERTH_HELPER_IMAGE', value: 'localhost/berth/busybox:1' }],
          command: [
            'sh',
            '-c',
            `cd /app && ${quoted} >/tmp/out.yaml 2>/tmp/err.txt; code=$?; cat /tmp/out.yaml; echo '${STDERR_MARK}'; cat /tmp/err.txt; echo "${EXIT_MARK}$code"; exec busybox sleep 600`,
          ],
          volumeMounts: [...sidecar.volumeMounts!.filter((m) => keep.has(m.name)), { name: 'app', mountPath: '/app', readOnly: true }],
        },
      ],
      volumes: [
        ...volumes.filter((v) => keep.has(v.name)),
        { name: 'app', configMap: { name: configMap, items: Object.keys(files).map((k) => ({ key: k, path: k })) } },
      ] as V1Volume[],
    },
  };
}

async function renderInPod(name: string, files: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  await apply([{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `${name}-app` }, data: files }], argocdNs);
  await kubectlOk(['apply', '-n', argocdNs, '-f', '-'], { input: JSON.stringify(renderPod(name, files, `${name}-app`)) });
  await waitForPod(kubeConfig(), argocdNs, name, (p) => p.status?.phase === 'Running', 60_000);
  const log = await eventually(
    `the render in pod ${name} ends`,
    async () => {
      const text = await containerLog(argocdNs, name, 'berth-cmp');
      return text.includes(EXIT_MARK) ? text : undefined;
    },
    { timeoutMs: 100_000, intervalMs: 500 },
  );
  const s = log.indexOf(STDERR_MARK);
  const e = log.lastIndexOf(EXIT_MARK);
  assert.ok(s >= 0 && e > s, `the render did not finish:\n${log}`);
  return { stdout: log.slice(0, s), stderr: log.slice(s + STDERR_MARK.length + 1, e), code: Number(log.slice(e + EXIT_MARK.length).trim()) };
}

/** The agent deletes each call's pod after answering, and its warm pods on drain: then nothing is left. */
async function drainAndCheck(name: string): Promise<void> {
  await kubectlOk(['exec', '-n', argocdNs, name, '-c', 'berth-cmp', '--', 'berth', 'shim', 'pool', 'drain']);
  await eventually('no berth object left in the functions namespace', async () => ((await berthObjects(fnNs)).length === 0 ? true : undefined), {
    timeoutMs: 30_000,
  });
  assert.deepEqual(await berthObjects(argocdNs), [], "nothing ran in the repo-server's namespace");
  await kubectlOk(['delete', 'pod', '-n', argocdNs, name, '--wait=true']);
}

/** The same build outside the cluster, with podman as `docker` (the shim tests' reference). */
async function renderOutside(files: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const tree = tempTree(files);
  try {
    return await runCommand('kubectl', ['kustomize', '--enable-alpha-plugins', tree.dir], {
      env: { ...process.env, PATH: `${REFERENCE_DIR}:${process.env.PATH}` },
      timeoutMs: 120_000,
    });
  } finally {
    tree.remove();
  }
}

test('the plugin renders in the sidecar as outside: transformer, generator and validator as pods of the functions namespace', async () => {
  if (!sidecar) assert.fail('the dev cluster gives pods no ServiceAccount identity: berth in a pod cannot call the API');
  const [inside, outside] = await Promise.all([renderInPod('render-ok', PACKAGE), renderOutside(PACKAGE)]);
  assert.equal(outside.code, 0, outside.stderr);
  assert.equal(inside.code, 0, inside.stderr);
  assert.equal(inside.stdout, outside.stdout);
  const docs = YAML.parseAllDocuments(inside.stdout).map((d) => d.toJSON());
  assert.deepEqual(
    docs.map((d) => `${d.kind}/${d.metadata.name}`),
    ['ConfigMap/generated-settings', 'Service/cart'],
  );
  assert.equal(docs[1].metadata.annotations.owner, 'berth-e2e');
  await drainAndCheck('render-ok');
});

test('a failing validator fails the build in the sidecar too, with its message', async () => {
  if (!sidecar) assert.fail('the dev cluster gives pods no ServiceAccount identity: berth in a pod cannot call the API');
  const [inside, outside] = await Promise.all([renderInPod('render-fail', FAILING), renderOutside(FAILING)]);
  assert.notEqual(outside.code, 0);
  assert.notEqual(inside.code, 0, inside.stdout);
  assert.equal(inside.stdout, outside.stdout);
  assert.match(inside.stderr, /require-label: 1 item\(s\) without label team/);
  await drainAndCheck('render-fail');
});
