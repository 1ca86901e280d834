// The pods whose files come through a file feed, planned by each face: the docker shim's and berth fn's
// (runtime/plan.ts), berth task's (task/pod-plan.ts) and berth serve's (dockerapi/containers/container-pod.ts).
// feed-pods.test.ts pins them byte for byte (feed-pods-golden.ts): the one feed mechanism they share must not
// change a pod where its behaviour does not change.
import { mkdtemp, mkdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { V1Pod } from '@kubernetes/client-node';
import { snapshotMounts } from '../../../src/runtime/mounts.js';
import { planWorkload, type PlanContext } from '../../../src/runtime/plan.js';
import { ANNOTATION_EXPIRES_AT } from '../../../src/runtime/pod-rules.js';
import { layPodTemplate } from '../../../src/runtime/pod-template.js';
import type { PodTemplateSource, Workload } from '../../../src/runtime/workload.js';
import { DOCKER_DEFAULT_CAPABILITIES } from '../../../src/dockerapi/containers/capabilities.js';
import { planRunPod, type PodContext, type RunPodInputs } from '../../../src/dockerapi/containers/container-pod.js';
import { replanContainer } from '../../../src/dockerapi/containers/create-plan.js';
import { freshRunState, type ContainerRecord, type CreateBody } from '../../../src/dockerapi/model.js';
import { parseTaskConfig } from '../../../src/task/config.js';
import { layOut } from '../../../src/task/layout.js';
import { planTaskPod, type TaskPodContext } from '../../../src/task/pod-plan.js';

const NOW = new Date('2025-01-02T03:04:05.678Z');
const OWNER = 'unit-owner';

const template: PodTemplateSource = {
  origin: 'pod template tpl',
  template: {
    metadata: { labels: { team: 'a' } },
    spec: { securityContext: { runAsUser: 4242, fsGroup: 4242 }, containers: [{ name: 'main', securityContext: { runAsGroup: 7 } }] },
  },
};

/** A folder mounted read-write (so it goes through the feed), and a small read-only file (a ConfigMap). */
async function mountsOnDisk(): Promise<{ dir: string; file: string }> {
  const root = await mkdtemp(path.join(tmpdir(), 'berth-feed-pods-'));
  const dir = path.join(root, 'data');
  await mkdir(path.join(dir, 'sub'), { recursive: true });
  await writeFile(path.join(dir, 'a.txt'), 'a\n');
  await writeFile(path.join(dir, 'sub', 'b.txt'), 'b\n');
  const file = path.join(root, 'conf.yaml');
  await writeFile(file, 'k: v\n');
  return { dir, file };
}

async function shimPods(): Promise<Record<string, V1Pod>> {
  const { dir, file } = await mountsOnDisk();
  const ctx: PlanContext = { namespace: 'ci', owner: OWNER, now: NOW, ttlSeconds: 600, runId: 'abc12345', helperImage: 'helper:1' };
  const mounts = [
    { source: dir, target: '/data', readOnly: false },
    { source: file, target: '/etc/conf.yaml', readOnly: true },
  ];
  const shim: Workload = { image: 'alpine:3', command: ['sh', '-c', 'cat'], stdin: true, user: { uid: 1000, gid: 1000 }, mounts };
  const fn: Workload = {
    image: 'ghcr.io/fn/set-labels:v1',
    command: ['/fn'],
    stdin: true,
    user: { uid: 65534, gid: 65534 },
    network: 'none',
    noNewPrivileges: true,
    pullPolicy: 'IfNotPresent',
    mounts: [mounts[0]],
  };
  const snaps = await snapshotMounts(mounts);
  return {
    'shim: a read-write folder and a small file': planWorkload(shim, { ...ctx, mounts: snaps }).pod,
    'shim: mounts and stdin as a file': planWorkload(shim, { ...ctx, mounts: snaps, stdinAsFile: true }).pod,
    'shim: stdin as a file under a pod template': planWorkload({ ...shim, mounts: undefined, podTemplate: template }, { ...ctx, stdinAsFile: true }).pod,
    'fn: a mount, --network none, stdin as a file': planWorkload(fn, { ...ctx, mounts: [snaps[0]], stdinAsFile: true }).pod,
    'fn: stdin as a file only': planWorkload({ ...fn, mounts: undefined }, { ...ctx, stdinAsFile: true }).pod,
  };
}

function taskPods(): Record<string, V1Pod> {
  const ctx: TaskPodContext = {
    namespace: 'ci',
    owner: OWNER,
    runId: 'abcd1234',
    now: NOW,
    ttlSeconds: 600,
    image: 'busybox:1',
    helperImage: 'helper:1',
    step: 'build',
    target: 'kind',
  };
  const plan = (yaml: string, more: Partial<TaskPodContext> = {}, cwd = '/'): V1Pod => {
    const config = parseTaskConfig(`platform: linux\n${yaml}`, 't.yml');
    const inputs = config.inputs.map((i) => ({ name: i.name, dir: `/src/${i.name}` }));
    const layout = layOut(config, { inputs, outputs: [], args: [], workDir: '/tmp/build/0a1b2c3d', cwd });
    return planTaskPod(config, layout, config.params, { ...ctx, ...more });
  };
  const full = "inputs: [{name: src}, {name: it's, path: odd dir}]\noutputs: [{name: out}]\nparams: {A: '1'}\nrun: {path: make, dir: src/sub, user: '1000'}\n";
  return {
    'task: inputs, outputs, params, run.dir': plan(full),
    'task: with caches': plan(full, { caches: [{ path: 'cache/go', claim: 'claim-1' }] }),
    'task: under a target template': layPodTemplate(plan(full), template),
    'task: nothing to feed': plan('run: {path: ls}\n'),
  };
}

function container(body: CreateBody, cmd: string[]): ContainerRecord {
  const full = { Image: 'busybox', ...body };
  return {
    id: 'ab'.repeat(32),
    name: 'web',
    created: NOW,
    image: 'busybox',
    body: full,
    plan: replanContainer(full, { allowed: DOCKER_DEFAULT_CAPABILITIES, allowPrivileged: false }),
    cmd,
    entrypoint: [],
    ...freshRunState(),
    generation: 1,
    networks: new Map(),
  };
}

function servePods(): Record<string, V1Pod> {
  const ctx: PodContext = { namespace: 'ns', owner: OWNER, ttlSeconds: 600 };
  const inputs = (more: Partial<RunPodInputs>): RunPodInputs => ({
    podName: 'web-1',
    volumes: [],
    ports: [],
    hostAliases: [],
    template: undefined,
    record: '{}',
    ...more,
  });
  const mounts = [
    { name: 'berth-files', mountPath: '/etc/app.conf', subPath: '0/app.conf' },
    { name: 'berth-files', mountPath: '/srv/www/index.html', subPath: '1/www/index.html' },
  ];
  const feed = { helperImage: 'helper:1', mounts };
  return {
    'serve: files copied before start, command unknown': planRunPod(container({ User: '1000:1000' }, []), inputs({ fileFeed: feed }), ctx),
    'serve: files fed under a pod template': planRunPod(container({}, []), inputs({ fileFeed: feed, template }), ctx),
    'serve: files fed, NetworkMode=none': planRunPod(
      container({ HostConfig: { NetworkMode: 'none' } }, []),
      inputs({ fileFeed: feed, isolationImage: 'helper:1' }),
      ctx,
    ),
  };
}

/** Every pod, its expiry (read from the clock by serve's planner) set to one value. */
export async function feedPods(): Promise<Record<string, V1Pod>> {
  const pods = { ...(await shimPods()), ...taskPods(), ...servePods() };
  for (const pod of Object.values(pods)) {
    const a = pod.metadata?.annotations;
    if (a?.[ANNOTATION_EXPIRES_AT]) a[ANNOTATION_EXPIRES_AT] = 'EXPIRY';
  }
  return pods;
}
