import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isPodTemplateFile, layPodTemplate, loadPodTemplate, PodTemplateError, withoutDefaultedPullPolicies } from '../../../src/runtime/pod-template.js';
import { planSandboxPod } from '../../../src/runtime/sandbox-plan.js';
import type { PodTemplateSource } from '../../../src/runtime/workload.js';
import { scratchDir } from '../../util/scratch.js';

const ctx = { namespace: 'ns', owner: 'inst1', now: new Date('2024-01-01T00:00:00Z'), ttlSeconds: 600 };
const noObjects = (name: string): Promise<never> => Promise.reject(new Error(`no object ${name}`));

const template: PodTemplateSource = {
  origin: 'test',
  template: {
    metadata: { labels: { team: 'qa', 'berth.dev/owner': 'someone-else' }, annotations: { note: 'from-template' } },
    spec: {
      tolerations: [{ key: 'ci', operator: 'Exists', effect: 'NoSchedule' }],
      priorityClassName: 'low',
      terminationGracePeriodSeconds: 3,
      activeDeadlineSeconds: 99999,
      restartPolicy: 'Always',
      securityContext: { runAsNonRoot: false, runAsUser: 1000, fsGroup: 2000 },
      volumes: [{ name: 'cache', emptyDir: {} }],
      containers: [
        {
          name: 'base',
          image: 'ignored',
          imagePullPolicy: 'Always',
          env: [
            { name: 'PROXY', value: 'http://proxy' },
            { name: 'MODE', value: 'template' },
          ],
          volumeMounts: [{ name: 'cache', mountPath: '/cache' }],
          resources: { requests: { cpu: '10m' }, limits: { cpu: '1' } },
          securityContext: { capabilities: { add: ['NET_ADMIN'] } },
        },
      ],
    },
  },
};

test('a template fills what berth leaves open; berth keeps ownership, command, restart policy and deadline', () => {
  const pod = planSandboxPod({ podName: 'p', shortId: 'abc', image: 'img', cmd: ['sleep', '1'], env: ['MODE=docker'], user: '42', template }, ctx);
  assert.equal(pod.metadata!.labels!.team, 'qa');
  assert.equal(pod.metadata!.labels!['berth.dev/owner'], 'inst1');
  assert.equal(pod.metadata!.annotations!.note, 'from-template');
  const spec = pod.spec!;
  assert.deepEqual(spec.tolerations, [{ key: 'ci', operator: 'Exists', effect: 'NoSchedule' }]);
  assert.equal(spec.priorityClassName, 'low');
  assert.equal(spec.restartPolicy, 'Never');
  assert.equal(spec.activeDeadlineSeconds, 600, 'a template may only shorten the deadline');
  assert.equal(spec.terminationGracePeriodSeconds, 3);
  // The template loosens the pod's security context, but the client's --user stays.
  assert.equal(spec.securityContext!.runAsUser, 42);
  assert.equal(spec.securityContext!.fsGroup, 2000);
  assert.deepEqual(spec.securityContext!.seccompProfile, { type: 'RuntimeDefault' });
  const [main] = spec.containers;
  assert.equal(spec.containers.length, 1);
  assert.equal(main.name, 'main');
  assert.equal(main.image, 'img');
  assert.deepEqual(main.args, ['sleep', '1']);
  assert.equal(main.imagePullPolicy, 'Always', "the template's pull policy when no flag or label sets one");
  assert.deepEqual(main.env, [
    { name: 'PROXY', value: 'http://proxy' },
    { name: 'MODE', value: 'docker' },
  ]);
  assert.deepEqual(main.volumeMounts, [{ name: 'cache', mountPath: '/cache' }]);
  assert.deepEqual(main.resources, { requests: { cpu: '10m' }, limits: { cpu: '1' } });
  assert.deepEqual(main.securityContext!.capabilities, { add: ['NET_ADMIN'] });
  assert.deepEqual(spec.volumes, [{ name: 'cache', emptyDir: {} }]);
});

test('settings and HostConfig win over the template', () => {
  const pod = planSandboxPod(
    { podName: 'p', shortId: 'abc', image: 'img', memory: 64 * 1024 * 1024, template, settings: { pullPolicy: 'Never', requests: { cpu: '50m' } } },
    ctx,
  );
  const [main] = pod.spec!.containers;
  assert.equal(main.imagePullPolicy, 'Never');
  assert.deepEqual(main.resources, { requests: { cpu: '50m' }, limits: { cpu: '1', memory: String(64 * 1024 * 1024) } });
});

test("the request's DNS, host namespaces and node selector win over the template's; berth's init containers come after its own", () => {
  const withMore: PodTemplateSource = {
    origin: 'test',
    template: {
      ...template.template,
      spec: {
        ...template.template.spec,
        dnsPolicy: 'ClusterFirst',
        dnsConfig: { searches: ['tpl.example'] },
        hostNetwork: false,
        nodeSelector: { pool: 'tpl', disk: 'ssd' },
        initContainers: [{ name: 'tpl-init', image: 'tpl' }],
      },
    },
  };
  const gate = { name: 'gate', image: 'helper', securityContext: { allowPrivilegeEscalation: false } };
  const pod = planSandboxPod(
    {
      podName: 'p',
      shortId: 'abc',
      image: 'img',
      template: withMore,
      settings: { nodeSelector: { pool: 'settings', zone: 'a' } },
      dns: { nameservers: ['10.0.0.2'], searches: [], options: [{ name: 'ndots', value: '2' }] },
      hostNetwork: true,
      hostIPC: true,
      nodeSelector: { 'kubernetes.io/arch': 'arm64', zone: 'b' },
      initContainers: [{ name: 'feed', image: 'helper' }, gate],
      extraVolumes: [{ name: 'feed', emptyDir: {} }],
      extraMounts: [{ name: 'feed', mountPath: '/etc/app.conf', subPath: '0/app.conf' }],
    },
    ctx,
  );
  const spec = pod.spec!;
  assert.equal(spec.dnsPolicy, 'None', 'servers of its own');
  assert.deepEqual(spec.dnsConfig, { nameservers: ['10.0.0.2'], options: [{ name: 'ndots', value: '2' }] });
  assert.equal(spec.hostNetwork, true);
  assert.equal(spec.hostIPC, true);
  assert.deepEqual(spec.nodeSelector, { pool: 'settings', disk: 'ssd', zone: 'b', 'kubernetes.io/arch': 'arm64' });
  assert.deepEqual(
    spec.initContainers?.map((c) => c.name),
    ['tpl-init', 'feed', 'gate'],
  );
  const [main] = spec.containers;
  assert.deepEqual(
    spec.initContainers![1].securityContext,
    main.securityContext,
    'one without a securityContext runs as the main container, as laid on the template',
  );
  assert.deepEqual(main.securityContext!.capabilities, { add: ['NET_ADMIN'] }, "the template's loosening is in it");
  assert.deepEqual(spec.initContainers![2].securityContext, gate.securityContext, 'one with its own keeps it');
  assert.deepEqual(
    spec.volumes?.map((v) => v.name),
    ['cache', 'feed'],
  );
  assert.deepEqual(main.volumeMounts?.at(-1), { name: 'feed', mountPath: '/etc/app.conf', subPath: '0/app.conf' });
});

test("a pod that is not the container's own carries its short id under another label, never the container label", () => {
  const pod = planSandboxPod({ podName: 'p', shortId: 'abc', image: 'img', idLabel: 'berth.dev/peek-of', labels: { 'berth.dev/container': 'forged' } }, ctx);
  assert.equal(pod.metadata!.labels!['berth.dev/peek-of'], 'abc');
  assert.equal(pod.metadata!.labels!['berth.dev/container'], undefined);
});

test('a template with a second container is refused, naming where it came from', () => {
  const two: PodTemplateSource = { origin: 'PodTemplate two', template: { spec: { containers: [{ name: 'a' }, { name: 'b' }] } } };
  assert.throws(
    () => layPodTemplate({ spec: { containers: [{ name: 'main' }] } }, two),
    (e: Error) => e instanceof PodTemplateError && /PodTemplate two has 2 containers/.test(e.message),
  );
});

test('templates load from a Pod, a PodTemplate or a bare template file, or by object name', async () => {
  const dir = scratchDir('berth-tpl-');
  const pod = join(dir, 'pod.yaml');
  writeFileSync(pod, 'apiVersion: v1\nkind: Pod\nmetadata: {labels: {a: "1"}}\nspec: {priorityClassName: x, containers: [{name: c}]}\n');
  const pt = join(dir, 'pt.yaml');
  writeFileSync(pt, 'apiVersion: v1\nkind: PodTemplate\nmetadata: {name: t}\ntemplate: {metadata: {labels: {b: "2"}}, spec: {containers: [{name: c}]}}\n');
  const bad = join(dir, 'bad.yaml');
  writeFileSync(bad, 'a: [\n');
  assert.equal((await loadPodTemplate(pod, noObjects, 'flag')).template.metadata?.labels?.a, '1');
  assert.equal((await loadPodTemplate(pt, noObjects, 'flag')).template.metadata?.labels?.b, '2');
  await assert.rejects(loadPodTemplate(bad, noObjects, '--pod-template'), /not valid YAML.*--pod-template/s);
  await assert.rejects(loadPodTemplate(join(dir, 'none.yaml'), noObjects, '--pod-template'), /does not exist \(--pod-template\)/);
  const byName = await loadPodTemplate('ci-pods', async (name) => ({ metadata: { name }, template: { metadata: { labels: { c: '3' } } } }), 'flag');
  assert.equal(byName.origin, 'PodTemplate ci-pods');
  assert.equal(byName.template.metadata?.labels?.c, '3');
  assert.equal(isPodTemplateFile('ci-pods'), false);
  assert.equal(isPodTemplateFile('./t.yaml'), true);
});

test('a PodTemplate object read back loses the pull policy the API server defaulted for its placeholder image, and keeps a chosen one', () => {
  const spec = (containers: Array<{ image: string; imagePullPolicy: string }>) => ({
    spec: { containers: containers.map((c, i) => ({ name: `c${i}`, ...c })) },
  });
  const policies = (t: ReturnType<typeof withoutDefaultedPullPolicies>) =>
    (t.spec as { containers: Array<{ imagePullPolicy?: string }> }).containers.map((c) => c.imagePullPolicy);
  assert.deepEqual(
    policies(
      withoutDefaultedPullPolicies(
        spec([
          { image: 'replaced-by-berth', imagePullPolicy: 'Always' },
          { image: 'base:latest', imagePullPolicy: 'Always' },
          { image: 'base:1', imagePullPolicy: 'IfNotPresent' },
          { image: 'registry:5000/base', imagePullPolicy: 'Always' },
        ]),
      ),
    ),
    [undefined, undefined, undefined, undefined],
  );
  assert.deepEqual(
    policies(
      withoutDefaultedPullPolicies(
        spec([
          { image: 'base:1', imagePullPolicy: 'Always' },
          { image: 'placeholder', imagePullPolicy: 'Never' },
          { image: 'registry:5000/base@sha256:abc', imagePullPolicy: 'Always' },
        ]),
      ),
    ),
    ['Always', 'Never', 'Always'],
  );
});
