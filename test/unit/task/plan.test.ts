import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseTaskConfig } from '../../../src/task/config.js';
import { layOut, parseMapping, parseUser, TaskUsageError } from '../../../src/task/layout.js';
import { INPUTS_CONTAINER, OUTPUTS_CONTAINER, planParamsSecret, planTaskPod, TASK_CONTAINER, type TaskPodContext } from '../../../src/task/pod-plan.js';

const WORK = '/tmp/build/0a1b2c3d';
const config = (yaml: string) => parseTaskConfig(`platform: linux\n${yaml}`, 't.yml');
const ctx: TaskPodContext = {
  namespace: 'ci',
  owner: 'me',
  runId: 'abcd1234',
  now: new Date('2025-01-01T00:00:00Z'),
  ttlSeconds: 600,
  image: 'busybox:1',
  helperImage: 'helper:1',
};

test('run.path: absolute as is, relative with a slash from run.dir, a bare name on PATH; ARGS appended', () => {
  const lay = (run: string, args: string[] = []) => layOut(config(`run: ${run}\n`), { inputs: [], outputs: [], args, workDir: WORK, cwd: '/here' });
  assert.deepEqual(lay('{path: /bin/sh, args: [-c, x]}', ['a']).command, ['/bin/sh', '-c', 'x', 'a']);
  assert.deepEqual(lay('{path: sh}').command, ['sh']);
  assert.deepEqual(lay('{path: repo/ci/test.sh}').command, [`${WORK}/repo/ci/test.sh`]);
  const inDir = lay('{path: ./scripts/build.sh, dir: repo}');
  assert.equal(inDir.cwd, `${WORK}/repo`);
  assert.deepEqual(inDir.command, [`${WORK}/repo/scripts/build.sh`]);
});

test('inputs: -i names checked, required ones present, the current folder is the input named as it is (fly execute)', () => {
  const c = config('inputs: [{name: a}, {name: b, path: x/b}, {name: c, optional: true}]\noutputs: [{name: o}]\nrun: {path: ls}\n');
  const base = { outputs: [], args: [], workDir: WORK, cwd: '/here' };
  assert.throws(
    () => layOut(c, { ...base, inputs: [] }),
    (e: Error) => e instanceof TaskUsageError && /missing required input `a`: pass -i a=DIR/.test(e.message),
  );
  assert.throws(() => layOut(c, { ...base, inputs: [{ name: 'z', dir: '/z' }] }), /unknown input `z`.*`a`, `b`, `c`/);
  assert.throws(() => layOut(c, { ...base, inputs: [], outputs: [{ name: 'p', dir: '/p' }] }), /unknown output `p`/);
  assert.throws(
    () =>
      layOut(c, {
        ...base,
        inputs: [
          { name: 'a', dir: '/a' },
          { name: 'a', dir: '/a2' },
        ],
      }),
    /input `a` is given twice \(-i a=\/a, -i a=\/a2\)/,
  );
  assert.deepEqual(
    layOut(c, {
      ...base,
      inputs: [
        { name: 'a', dir: '/a' },
        { name: 'b', dir: '/b' },
      ],
      outputs: [
        { name: 'o', dir: '/o1' },
        { name: 'o', dir: '/o2' },
      ],
    }).outputs,
    [{ name: 'o', path: 'o', dirs: ['/o1', '/o2'] }],
    'each -o of an output is a folder it goes to, as fly does',
  );
  const l = layOut(c, {
    ...base,
    inputs: [
      { name: 'a', dir: '/a' },
      { name: 'b', dir: '/b' },
    ],
  });
  assert.deepEqual(l.inputs, [
    { name: 'a', path: 'a', dir: '/a' },
    { name: 'b', path: 'x/b', dir: '/b' },
  ]);
  // fly execute: the current folder is the input named as it is, whatever the number of inputs, unless an -i gives it.
  const one = config('inputs: [{name: repo}]\nrun: {path: ls}\n');
  assert.deepEqual(layOut(one, { ...base, inputs: [], cwd: '/src/repo' }).inputs, [{ name: 'repo', path: 'repo', dir: '/src/repo' }]);
  assert.throws(
    () => layOut(one, { ...base, inputs: [] }),
    /missing required input `repo`: pass -i repo=DIR/,
    'a folder named otherwise is not taken, even for a single input',
  );
  assert.deepEqual(layOut(c, { ...base, inputs: [{ name: 'a', dir: '/a' }], cwd: '/work/b' }).inputs, [
    { name: 'a', path: 'a', dir: '/a' },
    { name: 'b', path: 'x/b', dir: '/work/b' },
  ]);
  assert.deepEqual(
    layOut(c, {
      ...base,
      inputs: [
        { name: 'a', dir: '/a' },
        { name: 'b', dir: '/other' },
      ],
      cwd: '/work/b',
    }).inputs[1],
    { name: 'b', path: 'x/b', dir: '/other' },
    'an -i for that input wins',
  );
  assert.throws(
    () => layOut(one, { ...base, inputs: [], cwd: '/src/repo', inPlan: true }),
    /missing required input `repo`: no artifact of that name/,
    'never in a plan',
  );
  assert.deepEqual(parseMapping('a=b=c', '-i'), { name: 'a', dir: 'b=c' });
  assert.throws(() => parseMapping('a', '-i'), /expected NAME=DIR/);
});

test('run.user: numeric or root', () => {
  assert.deepEqual(parseUser('root'), { uid: 0 });
  assert.deepEqual(parseUser('1000:2000'), { uid: 1000, gid: 2000 });
  assert.throws(() => parseUser('nobody'), /must be numeric/);
});

test('the pod: locked down, params only as Secret references, limits, outputs held open', () => {
  const c = config(
    'inputs: [{name: src}]\noutputs: [{name: out}]\nparams: {TOKEN: s3cret, NUM: 1}\nrun: {path: ls, user: "1000"}\ncontainer_limits: {cpu: 512, memory: 1GB}\n',
  );
  const layout = layOut(c, { inputs: [{ name: 'src', dir: '/src' }], outputs: [], args: [], workDir: WORK, cwd: '/' });
  const pod = planTaskPod(c, layout, c.params, ctx);
  const spec = pod.spec!;
  assert.equal(pod.metadata?.name, 'task-abcd1234');
  assert.equal(pod.metadata?.labels?.['app.kubernetes.io/managed-by'], 'berth');
  assert.equal(pod.metadata?.labels?.['berth.dev/owner'], 'me');
  assert.equal(pod.metadata?.annotations?.['berth.dev/expires-at'], '2025-01-01T00:10:00Z');
  assert.equal(spec.automountServiceAccountToken, false);
  assert.equal(spec.activeDeadlineSeconds, 600);
  assert.equal(spec.restartPolicy, 'Never');
  assert.deepEqual(spec.securityContext, { seccompProfile: { type: 'RuntimeDefault' }, runAsUser: 1000, runAsNonRoot: true });
  assert.deepEqual(
    spec.initContainers?.map((x) => x.name),
    [INPUTS_CONTAINER],
  );
  assert.deepEqual(
    spec.containers.map((x) => x.name),
    [TASK_CONTAINER, OUTPUTS_CONTAINER],
  );
  for (const container of [...spec.initContainers!, ...spec.containers]) {
    assert.deepEqual(container.securityContext, { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } }, container.name);
    assert.deepEqual(container.volumeMounts, [{ name: 'work', mountPath: WORK }]);
  }
  const task = spec.containers[0];
  assert.equal(task.image, 'busybox:1');
  assert.equal(task.workingDir, WORK);
  assert.deepEqual(task.resources, { requests: { cpu: '500m' }, limits: { memory: String(1024 ** 3) } });
  const unlimited = config('run: {path: ls}\ncontainer_limits: {cpu: 0, memory: 0}\n');
  assert.equal(
    planTaskPod(unlimited, layOut(unlimited, { inputs: [], outputs: [], args: [], workDir: WORK, cwd: '/' }), {}, ctx).spec?.containers[0].resources,
    undefined,
    '0 is no limit, as on a Concourse worker',
  );
  assert.doesNotMatch(JSON.stringify(pod), /s3cret/, 'no param value in the pod');
  assert.deepEqual(task.env, [
    { name: 'TOKEN', valueFrom: { secretKeyRef: { name: 'task-abcd1234-params', key: 'p0' } } },
    { name: 'NUM', valueFrom: { secretKeyRef: { name: 'task-abcd1234-params', key: 'p1' } } },
  ]);
  assert.match(spec.initContainers![0].command!.join(' '), /mkdir -p '\/tmp\/build\/0a1b2c3d\/out'/);
  const secret = planParamsSecret(c.params, { name: 'task-abcd1234', uid: 'u-1' }, ctx);
  assert.deepEqual(secret.data, { p0: Buffer.from('s3cret').toString('base64'), p1: Buffer.from('1').toString('base64') });
  assert.deepEqual(secret.metadata?.ownerReferences, [{ apiVersion: 'v1', kind: 'Pod', name: 'task-abcd1234', uid: 'u-1' }]);
});

test('no outputs: no container holds the pod open; no params: no env', () => {
  const c = config('run: {path: ls}\n');
  const pod = planTaskPod(c, layOut(c, { inputs: [], outputs: [], args: [], workDir: WORK, cwd: '/' }), {}, ctx);
  assert.deepEqual(
    pod.spec!.containers.map((x) => x.name),
    [TASK_CONTAINER],
  );
  assert.equal(pod.spec!.containers[0].env, undefined);
  assert.deepEqual(pod.spec!.securityContext, { seccompProfile: { type: 'RuntimeDefault' } });
});
