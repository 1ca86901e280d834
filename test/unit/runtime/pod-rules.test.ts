// The rules every pod berth creates obeys (design notes, "Rules that hold everywhere"), asserted on the pods of
// every planner: a function's run and warm pods (plan.ts), berth serve's run and peek pods (sandbox-plan.ts) and
// a task's pod (task/pod-plan.ts). Each face's own exceptions are written in its cases: serve gives Docker's
// capabilities back, a privileged serve container or task step exists only where the operator allowed it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Container, V1ObjectMeta, V1Pod } from '@kubernetes/client-node';
import type { KubeCluster } from '../../../src/kube/cluster.js';
import { FILES_CONTAINER, LABEL_RUN, planWorkload, type PlanContext } from '../../../src/runtime/plan.js';
import { ISOLATION_CONTAINER } from '../../../src/runtime/isolation-gate.js';
import { ANNOTATION_EXPIRES_AT, LABEL_MANAGED_BY, LABEL_OWNER, type RunAs } from '../../../src/runtime/pod-rules.js';
import { KILL_GRACE_SECONDS, LABEL_CONTAINER_ID, SANDBOX_CONTAINER } from '../../../src/runtime/sandbox-plan.js';
import { startWarmPod } from '../../../src/runtime/warm-start.js';
import { WarmPool } from '../../../src/runtime/warm-pool.js';
import { DOCKER_DEFAULT_CAPABILITIES } from '../../../src/dockerapi/containers/capabilities.js';
import { planPeekPod, planRunPod, type PodContext, type RunPodInputs } from '../../../src/dockerapi/containers/container-pod.js';
import { replanContainer, type CreatePolicy } from '../../../src/dockerapi/containers/create-plan.js';
import { FEED_CONTAINER } from '../../../src/dockerapi/containers/file-feed.js';
import { freshRunState, type ContainerRecord, type CreateBody } from '../../../src/dockerapi/model.js';
import { planDenyPolicy } from '../../../src/dockerapi/networks/network-isolation.js';
import { planCacheClaim } from '../../../src/task/caches.js';
import { parseTaskConfig } from '../../../src/task/config.js';
import { layOut } from '../../../src/task/layout.js';
import { INPUTS_CONTAINER, OUTPUTS_CONTAINER, planParamsSecret, planTaskPod, TASK_CONTAINER, type TaskPodContext } from '../../../src/task/pod-plan.js';

const OWNER = 'unit-owner';
const TTL = 600;
const NOW = new Date('2025-01-02T03:04:05.678Z');

/** A container's lockdown as its face's rule says: none given back, these given back after ALL, or privileged. */
type Lockdown = 'locked' | 'privileged' | { add: readonly string[] };

interface PodCase {
  name: string;
  pod: V1Pod;
  /** When it was planned, earliest and latest (ms): planners that read the clock themselves. */
  plannedAt: [number, number];
  deadlineSeconds: number;
  user: RunAs | undefined;
  /** Every container of the pod, init containers too, with its rule. */
  containers: Record<string, Lockdown>;
  readOnlyRoot?: string[];
}

const fixed: [number, number] = [NOW.getTime(), NOW.getTime()];
/** Labels a caller gives that would take the pod away from its owner. */
const CLAIMS = { [LABEL_OWNER]: 'thief', [LABEL_MANAGED_BY]: 'someone-else' };

// --- a function (the docker shim, berth fn) ---

const fnContext: PlanContext = { namespace: 'ci', owner: OWNER, now: NOW, ttlSeconds: TTL, runId: 'abc12345', helperImage: 'helper:1' };

function functionCases(): PodCase[] {
  // stdin as a file brings the files container, --network none the isolation gate
  const user = { uid: 65534, gid: 65534 };
  const full = planWorkload(
    { image: 'fn', command: ['fn'], stdin: true, user, network: 'none', deadlineSeconds: 300, labels: CLAIMS },
    { ...fnContext, stdinAsFile: true },
  );
  const root = planWorkload({ image: 'fn', user: { uid: 0 } }, fnContext);
  const locked = { [FILES_CONTAINER]: 'locked', [ISOLATION_CONTAINER]: 'locked', main: 'locked' } as const;
  return [
    { name: 'function, non-root, files and --network none', pod: full.pod, plannedAt: fixed, deadlineSeconds: 300, user, containers: locked },
    { name: 'function as root', pod: root.pod, plannedAt: fixed, deadlineSeconds: TTL, user: { uid: 0 }, containers: { main: 'locked' } },
  ];
}

/** A cluster where the warm pod runs as soon as it is created. */
function runningCluster(): KubeCluster {
  let onPod: ((pod: V1Pod, type: string) => boolean) | undefined;
  const running = { phase: 'Running', containerStatuses: [{ name: 'main', image: 'fn', imageID: '', ready: true, restartCount: 0, state: { running: {} } }] };
  return {
    namespace: 'ci',
    createConfigMap: async (cm: unknown) => cm,
    createNetworkPolicy: async (np: unknown) => np,
    deleteQuietly: async () => undefined,
    createPod: async (pod: V1Pod) => (queueMicrotask(() => onPod?.({ ...pod, status: running }, 'MODIFIED')), pod),
    watchPod: (_name: string, cb: typeof onPod, signal?: AbortSignal) => (
      (onPod = cb),
      new Promise<void>((resolve) => signal?.addEventListener('abort', () => resolve()))
    ),
  } as unknown as KubeCluster;
}

async function warmCase(): Promise<PodCase> {
  const created: V1Pod[] = [];
  const kube = runningCluster();
  const createPod = kube.createPod.bind(kube);
  kube.createPod = (pod) => (created.push(pod), createPod(pod));
  const before = Date.now();
  const warm = await startWarmPod(
    { image: 'fn', stdin: true, user: { uid: 1000 } },
    { namespace: 'ci', owner: OWNER, now: NOW, ttlSeconds: TTL },
    kube,
    'key',
    new WarmPool({ idleSeconds: 120 }),
  );
  const after = Date.now();
  warm.release();
  return {
    name: 'warm function pod',
    pod: created[0],
    plannedAt: [before, after],
    deadlineSeconds: TTL + 120,
    user: { uid: 1000 },
    containers: { main: 'locked' },
  };
}

// --- berth serve ---

const servePolicy: CreatePolicy = { allowed: DOCKER_DEFAULT_CAPABILITIES, allowPrivileged: false };
const serveContext: PodContext = { namespace: 'ns', owner: OWNER, ttlSeconds: TTL };

function container(body: CreateBody, policy = servePolicy): ContainerRecord {
  const full = { Image: 'busybox', ...body };
  return {
    id: 'ab'.repeat(32),
    name: 'web',
    created: NOW,
    image: 'busybox',
    body: full,
    plan: replanContainer(full, policy),
    cmd: ['sleep', '60'],
    entrypoint: [],
    ...freshRunState(),
    generation: 1,
    networks: new Map(),
  };
}

const runInputs = (more: Partial<RunPodInputs> = {}): RunPodInputs => ({
  podName: 'web-1',
  volumes: [],
  ports: [],
  hostAliases: [],
  template: undefined,
  record: '{}',
  ...more,
});

function serveCases(): PodCase[] {
  const before = Date.now();
  const feed = { helperImage: 'helper:1', mounts: [{ name: 'berth-feed', mountPath: '/etc/app.conf', subPath: '0/app.conf' }] };
  const full = planRunPod(container({ User: '1000:1000', Labels: CLAIMS }), runInputs({ fileFeed: feed, isolationImage: 'helper:1' }), serveContext);
  const narrowed = planRunPod(container({ HostConfig: { CapDrop: ['NET_RAW'], ReadonlyRootfs: true } }), runInputs(), serveContext);
  const privileged = planRunPod(container({ HostConfig: { Privileged: true } }, { ...servePolicy, allowPrivileged: true }), runInputs(), serveContext);
  const peek = planPeekPod(container({ User: '1000' }), 'web-peek1', undefined, { ...serveContext, capabilities: ['CHOWN'] });
  const at: [number, number] = [before, Date.now()];
  const docker = { add: DOCKER_DEFAULT_CAPABILITIES };
  return [
    // the files init container works on the main container's files, with its user and capabilities
    {
      name: 'serve container, non-root, files copied and NetworkMode=none',
      pod: full,
      plannedAt: at,
      deadlineSeconds: TTL,
      user: { uid: 1000, gid: 1000 },
      containers: { [FEED_CONTAINER]: docker, [ISOLATION_CONTAINER]: 'locked', [SANDBOX_CONTAINER]: docker },
    },
    {
      name: 'serve container, CapDrop and ReadonlyRootfs',
      pod: narrowed,
      plannedAt: at,
      deadlineSeconds: TTL,
      user: undefined,
      containers: { [SANDBOX_CONTAINER]: { add: DOCKER_DEFAULT_CAPABILITIES.filter((c) => c !== 'NET_RAW') } },
      readOnlyRoot: [SANDBOX_CONTAINER],
    },
    {
      name: 'serve container, Privileged on a berth serve --allow-privileged',
      pod: privileged,
      plannedAt: at,
      deadlineSeconds: TTL,
      user: undefined,
      containers: { [SANDBOX_CONTAINER]: 'privileged' },
    },
    {
      name: 'serve peek pod, --capabilities CHOWN',
      pod: peek,
      plannedAt: at,
      deadlineSeconds: TTL,
      user: { uid: 1000 },
      containers: { [SANDBOX_CONTAINER]: { add: ['CHOWN'] } },
    },
  ];
}

// --- berth task ---

const taskContext: TaskPodContext = {
  namespace: 'ci',
  owner: OWNER,
  runId: 'abcd1234',
  now: NOW,
  ttlSeconds: TTL,
  image: 'busybox:1',
  helperImage: 'helper:1',
};

function taskPod(yaml: string, ctx: TaskPodContext): V1Pod {
  const config = parseTaskConfig(`platform: linux\n${yaml}`, 't.yml');
  const layout = layOut(config, { inputs: [{ name: 'src', dir: '/src' }], outputs: [], args: [], workDir: '/tmp/build/0a1b2c3d', cwd: '/' });
  return planTaskPod(config, layout, config.params, ctx);
}

function taskCases(): PodCase[] {
  const task = 'inputs: [{name: src}]\noutputs: [{name: out}]\n';
  const helpers = { [INPUTS_CONTAINER]: 'locked', [OUTPUTS_CONTAINER]: 'locked' } as const;
  return [
    {
      name: 'task step, non-root',
      pod: taskPod(`${task}run: {path: ls, user: "1000"}\n`, taskContext),
      plannedAt: fixed,
      deadlineSeconds: TTL,
      user: { uid: 1000 },
      containers: { ...helpers, [TASK_CONTAINER]: 'locked' },
    },
    // a target that allows it: the task container only; berth's helpers stay locked down
    {
      name: 'task step, privileged, as root',
      pod: taskPod(`${task}run: {path: ls, user: root}\n`, { ...taskContext, privileged: true }),
      plannedAt: fixed,
      deadlineSeconds: TTL,
      user: { uid: 0 },
      containers: { ...helpers, [TASK_CONTAINER]: 'privileged' },
    },
  ];
}

const cases: PodCase[] = [...functionCases(), await warmCase(), ...serveCases(), ...taskCases()];

// --- the rules ---

const allContainers = (pod: V1Pod): V1Container[] => [...(pod.spec?.initContainers ?? []), ...pod.spec!.containers];

function checkContainer(c: V1Container, rule: Lockdown, where: string): void {
  const sc = c.securityContext ?? {};
  if (rule === 'privileged') {
    assert.deepEqual(
      [sc.privileged, sc.allowPrivilegeEscalation],
      [true, undefined],
      `${where}: privileged (Kubernetes refuses it beside allowPrivilegeEscalation: false)`,
    );
    return;
  }
  assert.equal(sc.privileged, undefined, `${where}: not privileged`);
  assert.equal(sc.allowPrivilegeEscalation, false, `${where}: no privilege escalation`);
  assert.deepEqual(sc.capabilities?.drop, ['ALL'], `${where}: all capabilities dropped`);
  assert.deepEqual(sc.capabilities?.add ?? [], rule === 'locked' ? [] : [...rule.add], `${where}: only the face's capabilities given back`);
}

/** Expiry and deadline agree: berth gc never removes a pod its deadline still lets run. */
function checkExpiry(c: PodCase, meta: V1ObjectMeta | undefined): void {
  const expires = Date.parse(meta?.annotations?.[ANNOTATION_EXPIRES_AT] ?? '');
  assert.ok(Number.isFinite(expires), `${c.name}: ${ANNOTATION_EXPIRES_AT} is a time`);
  // RFC 3339 to the second: up to 1 s earlier than the planning moment plus the deadline
  assert.ok(expires >= c.plannedAt[0] + c.deadlineSeconds * 1000 - 1000, `${c.name}: expires no earlier than its deadline ends it`);
  assert.ok(expires <= c.plannedAt[1] + Math.max(c.deadlineSeconds, TTL) * 1000, `${c.name}: expires within its ttl`);
}

const rules: Array<[string, (c: PodCase) => void]> = [
  ["restartPolicy Never (the exit code is the container's terminated state)", (c) => assert.equal(c.pod.spec?.restartPolicy, 'Never')],
  ['no service account token', (c) => assert.equal(c.pod.spec?.automountServiceAccountToken, false)],
  [
    'an activeDeadlineSeconds, and an expiry that agrees',
    (c) => (assert.equal(c.pod.spec?.activeDeadlineSeconds, c.deadlineSeconds), checkExpiry(c, c.pod.metadata)),
  ],
  [
    "a grace period of docker stop's 10 s; berth serve's pods the kubelet's shortest, as serve gives a stop's grace itself",
    (c) => assert.equal(c.pod.spec?.terminationGracePeriodSeconds, c.name.startsWith('serve ') ? KILL_GRACE_SECONDS : 10),
  ],
  ['seccomp RuntimeDefault', (c) => assert.deepEqual(c.pod.spec?.securityContext?.seccompProfile, { type: 'RuntimeDefault' })],
  [
    "the run's user, and non-root when it is",
    (c) => {
      const sc = c.pod.spec?.securityContext;
      assert.deepEqual([sc?.runAsUser, sc?.runAsGroup], [c.user?.uid, c.user?.gid]);
      assert.equal(sc?.runAsNonRoot, c.user && c.user.uid !== 0 ? true : undefined);
    },
  ],
  [
    "every container: no escalation, all capabilities dropped, only the face's given back; privileged only where allowed",
    (c) => {
      assert.deepEqual(
        allContainers(c.pod)
          .map((x) => x.name)
          .sort(),
        Object.keys(c.containers).sort(),
        'every container has its rule',
      );
      for (const x of allContainers(c.pod)) checkContainer(x, c.containers[x.name], `${c.name}, container ${x.name}`);
    },
  ],
  [
    'a read-only root filesystem where the container asked for one, and only there',
    (c) => {
      for (const x of allContainers(c.pod))
        assert.equal(x.securityContext?.readOnlyRootFilesystem, c.readOnlyRoot?.includes(x.name) ? true : undefined, x.name);
    },
  ],
  [
    'ownership: managed-by berth and the owner, whatever labels the caller gave',
    (c) => assert.deepEqual([c.pod.metadata?.labels?.[LABEL_MANAGED_BY], c.pod.metadata?.labels?.[LABEL_OWNER]], ['berth', OWNER]),
  ],
];

for (const [rule, check] of rules) {
  test(`every pod: ${rule}`, async (t) => {
    for (const c of cases) await t.test(c.name, () => check(c));
  });
}

test('side objects carry the ownership labels and an expiry, as their pods do', () => {
  const fn = planWorkload(
    { image: 'fn', network: 'none', mounts: [{ source: '/x', target: '/in', readOnly: true }] },
    {
      ...fnContext,
      mounts: [
        {
          mount: { source: '/x', target: '/in', readOnly: true, kind: 'file' },
          bytes: 1,
          entries: [{ path: '', type: 'file', mode: 0o644, data: Buffer.from('a') }],
        },
      ],
    },
  );
  const secret = planParamsSecret({ TOKEN: 'x' }, { name: 'task-abcd1234', uid: 'u' }, taskContext);
  const claim = planCacheClaim(
    { task: 't.yml', path: 'c', target: 'prod' },
    { namespace: 'ci', owner: OWNER, now: NOW, settings: { ttlSeconds: TTL, size: '1Gi' } },
  );
  const deny = planDenyPolicy(container({}), OWNER, TTL);
  const objects = [...fn.configMaps, fn.networkPolicy!, secret, claim, deny];
  assert.deepEqual(
    objects.map((o) => o.kind),
    ['ConfigMap', 'NetworkPolicy', 'Secret', 'PersistentVolumeClaim', 'NetworkPolicy'],
  );
  for (const o of objects) {
    assert.deepEqual([o.metadata?.labels?.[LABEL_MANAGED_BY], o.metadata?.labels?.[LABEL_OWNER]], ['berth', OWNER], o.kind);
    assert.ok(Number.isFinite(Date.parse(o.metadata?.annotations?.[ANNOTATION_EXPIRES_AT] ?? '')), `${o.kind} has an expiry`);
  }
});

test('network denied when the caller asked for none: a deny-all policy selecting exactly the pod, and the gate before it runs', () => {
  const fn = planWorkload({ image: 'fn', network: 'none' }, fnContext);
  assert.deepEqual(fn.networkPolicy?.spec, { podSelector: { matchLabels: { [LABEL_RUN]: 'abc12345' } }, policyTypes: ['Ingress', 'Egress'] });
  assert.equal(fn.pod.metadata?.labels?.[LABEL_RUN], 'abc12345');
  assert.equal(fn.pod.spec?.initContainers?.at(-1)?.name, ISOLATION_CONTAINER);
  const c = container({ HostConfig: { NetworkMode: 'none' } });
  const pod = planRunPod(c, runInputs({ isolationImage: 'helper:1' }), serveContext);
  const deny = planDenyPolicy(c, OWNER, TTL);
  assert.deepEqual(deny.spec?.policyTypes, ['Ingress', 'Egress']);
  assert.equal(deny.spec?.ingress, undefined);
  assert.equal(deny.spec?.egress, undefined);
  for (const [k, v] of Object.entries(deny.spec?.podSelector?.matchLabels ?? {})) assert.equal(pod.metadata?.labels?.[k], v, `the pod carries ${k}`);
  assert.equal(deny.spec?.podSelector?.matchLabels?.[LABEL_CONTAINER_ID], c.id.slice(0, 12));
  assert.equal(pod.spec?.initContainers?.at(-1)?.name, ISOLATION_CONTAINER);
});
