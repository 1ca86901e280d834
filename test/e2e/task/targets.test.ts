// berth task targets through the real CLI, as the user bound to exactly deploy/rbac/task-role.yaml: check (and a
// check without each rule of that Role), --target, land, privileged, gc and retire.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import YAML from 'yaml';
import { berthCli, BUSYBOX, contextFor, kubectlOk, repoRoot } from '../harness/cluster.js';
import { eventually } from '../../util/eventually.js';
import { FIXTURES, runCommand, setUpTask, tempTree, TASK_USER, type TaskEnv } from './task-env.js';

const ROLE_FILE = join(repoRoot, 'deploy/rbac/task-role.yaml');

describe('berth task target', () => {
  let t: TaskEnv;
  let home: { dir: string; remove(): void };
  let env: NodeJS.ProcessEnv;
  const berth = (args: string[], timeoutMs = 120_000) => runCommand(process.execPath, [berthCli, 'task', ...args], { env, timeoutMs });
  /** A running `berth task ...`, its output as it comes. */
  const start = (args: string[]) => {
    const child = spawn(process.execPath, [berthCli, 'task', ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    const out = { stdout: '', stderr: '' };
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out.stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (out.stderr += d));
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    return { child, out, exited };
  };
  const taskPods = async (): Promise<
    Array<{
      metadata: { name: string; labels: Record<string, string>; annotations: Record<string, string> };
      spec: { containers: Array<{ env?: Array<{ name: string; value?: string }> }> };
    }>
  > => JSON.parse(await kubectlOk(['-n', t.namespace, 'get', 'pods', '-l', 'app.kubernetes.io/component=task', '-o', 'json'])).items;

  before(async () => {
    t = await setUpTask('task-targets');
    home = tempTree({
      'template.yaml':
        'kind: PodTemplate\ntemplate:\n  metadata:\n    labels: { team: blue }\n  spec:\n    containers:\n      - name: base\n        env: [{ name: FROM_TEMPLATE, value: blue }]\n',
      // Runs until the test lets it go (kubectl exec touches /tmp/go): a step that is running whatever the machine's speed.
      'held.yml': 'platform: linux\nrun:\n  path: sh\n  args: [-c, \'echo "ready $FROM_TEMPLATE"; until [ -e /tmp/go ]; do sleep 0.2; done; echo done\']\n',
      'caps.yml': "platform: linux\nrun:\n  path: sh\n  args: [-c, 'grep CapEff /proc/self/status']\n",
      'cached.yml': "platform: linux\ncaches:\n  - path: cache\nrun:\n  path: sh\n  args: [-c, 'echo kept > cache/file']\n",
    });
    // The target supplies the context and the namespace: none comes from the environment.
    env = { ...t.env({ XDG_CONFIG_HOME: join(home.dir, 'config') }) };
    delete env.BERTH_CONTEXT;
    delete env.BERTH_NAMESPACE;
    const add = await berth([
      'target',
      'add',
      'ci',
      '--kubeconfig',
      String(env.KUBECONFIG),
      '--context',
      contextFor(TASK_USER),
      '-n',
      t.namespace,
      '--pod-template',
      join(home.dir, 'template.yaml'),
    ]);
    assert.equal(add.code, 0, add.stderr);
    assert.match(add.stdout, new RegExp(`^target ci added: context ${contextFor(TASK_USER)}, namespace ${t.namespace}$`, 'm'));
  });
  after(async () => {
    await t?.close();
    home?.remove();
  });

  it("add and ls: a table as fly targets prints; the file is the user's only (0600)", async () => {
    const file = join(home.dir, 'config/berth/task-targets.yaml');
    assert.equal(statSync(file).mode & 0o777, 0o600);
    const ls = await berth(['target', 'ls']);
    assert.equal(ls.code, 0, ls.stderr);
    const [header, row] = ls.stdout.trimEnd().split('\n');
    assert.match(header, /^name +context +namespace +kubeconfig +pod template +privileged +state$/);
    assert.match(row, new RegExp(`^ci +${contextFor(TASK_USER)} +${t.namespace} +\\S+ +\\S+template\\.yaml +no +active$`));
    const bad = await berth(['target', 'add', 'x', '--context', 'no-such-context']);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /context "no-such-context" is not in/);
    assert.doesNotMatch(readFileSync(file, 'utf8'), /name: x/, 'a refused add changes nothing');
  });

  it('check: reachable and every permission there with the shipped Role', async () => {
    const r = await berth(['target', 'check', 'ci']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^reachable: Kubernetes 1\.\d+$/m);
    assert.match(r.stdout, /^yes {2}get pods\/log/m);
    assert.doesNotMatch(r.stdout, /^(no|\?) /m);
    assert.match(r.stdout, /^target ci is ready$/m);
  });

  it('check: without each rule of the Role in turn, names that rule and what it grants', async () => {
    const role = YAML.parse(readFileSync(ROLE_FILE, 'utf8')) as { rules: Array<{ resources: string[]; verbs: string[] }> };
    try {
      for (const [i, rule] of role.rules.entries()) {
        const without = { ...role, rules: role.rules.filter((_, j) => j !== i) };
        await kubectlOk(['-n', t.namespace, 'replace', '-f', '-'], { input: JSON.stringify(without) });
        const r = await berth(['target', 'check', 'ci']);
        assert.equal(r.code, 1, `without rule ${i + 1}: ${r.stdout}${r.stderr}`);
        for (const resource of rule.resources) {
          for (const verb of rule.verbs) {
            assert.match(r.stdout, new RegExp(`^no {3}${verb} ${resource.replace('/', '\\/')} `, 'm'));
            assert.match(
              r.stderr,
              new RegExp(
                `cannot ${verb} ${resource.replace('/', '\\/')} \\(needed to [^)]*\\): granted by rule ${i + 1} of deploy/rbac/task-role\\.yaml \\(line \\d+: `,
              ),
              r.stderr,
            );
          }
        }
        assert.match(r.stderr, /fix: kubectl apply -n \S+ -f deploy\/rbac\/task-role\.yaml/);
        assert.match(r.stdout, /^target ci is not ready$/m);
      }
    } finally {
      await kubectlOk(['-n', t.namespace, 'replace', '-f', '-'], { input: readFileSync(ROLE_FILE, 'utf8') });
    }
  });

  it("--target: the step runs in the target's namespace with its pod template, labeled with the step and the target; land: running steps finish, new ones are refused", async () => {
    const a = start(['run', '--target', 'ci', '-c', join(home.dir, 'held.yml'), '--image', BUSYBOX]);
    await eventually('the task prints ready', () => a.out.stdout.includes('ready'), { timeoutMs: 90_000 });
    assert.equal(a.out.stdout, 'ready blue\n', "the env var of the target's pod template reached the task");
    const [pod] = await taskPods();
    assert.equal(pod.metadata.labels['app.kubernetes.io/managed-by'], 'berth');
    assert.equal(pod.metadata.labels['berth.dev/target'], 'ci');
    assert.equal(pod.metadata.labels['berth.dev/step'], 'held');
    assert.equal(pod.metadata.labels.team, 'blue');
    assert.ok(Date.parse(pod.metadata.annotations['berth.dev/expires-at']) > Date.now(), 'an expiry in the future');

    const land = await berth(['target', 'land', 'ci']);
    try {
      assert.equal(land.code, 0, land.stderr);
      const refused = await berth(['run', '--target', 'ci', '-c', join(FIXTURES, 'print-param.yml'), '--image', BUSYBOX]);
      assert.equal(refused.code, 2);
      assert.match(
        refused.stderr,
        /target ci is landed \(berth task target land\): no new steps start there\. Use it again with `berth task target unland ci`/,
      );
      const plan = await berth(['plan', 'run', join(FIXTURES, 'plan-failure.yml'), '--target', 'ci', '--image', BUSYBOX]);
      assert.equal(plan.code, 2);
      assert.match(plan.stderr, /target ci is landed/);
      assert.equal(plan.stdout, '');
      assert.deepEqual(
        (await taskPods()).map((p) => p.metadata.name),
        [pod.metadata.name],
        'nothing new was created on the landed target',
      );
      assert.match((await berth(['target', 'ls'])).stdout, /landed\n/);

      await kubectlOk(['-n', t.namespace, 'exec', pod.metadata.name, '-c', 'task', '--', 'touch', '/tmp/go']);
      assert.equal(await a.exited, 0, a.out.stderr);
      assert.equal(a.out.stdout, 'ready blue\ndone\n', 'the step that was running when the target landed finished');
    } finally {
      a.child.kill('SIGTERM');
      const unland = await berth(['target', 'unland', 'ci']);
      assert.equal(unland.code, 0, unland.stderr);
    }
    const again = await berth(['run', '--target', 'ci', '-c', join(FIXTURES, 'print-param.yml'), '--image', BUSYBOX]);
    assert.equal(again.code, 0, again.stderr);
    assert.deepEqual(await t.leftovers(), []);
  });

  it('-p is refused unless the target allows privileged steps; there it runs privileged', async () => {
    const refused = await berth(['run', '--target', 'ci', '-p', '-c', join(home.dir, 'caps.yml'), '--image', BUSYBOX]);
    assert.equal(refused.code, 2);
    assert.match(
      refused.stderr,
      /-p \(privileged\) is refused: target ci runs every step locked down; allow privileged steps there with `berth task target add ci --allow-privileged`/,
    );
    const unnamed = await runCommand(process.execPath, [berthCli, 'task', 'run', '-p', '-c', join(home.dir, 'caps.yml'), '--image', BUSYBOX], {
      env: t.env(),
      timeoutMs: 60_000,
    });
    assert.equal(unnamed.code, 2);
    assert.match(unnamed.stderr, /without --target, berth runs every task locked down; add a target that allows it/);
    assert.deepEqual(await t.leftovers(), [], 'a refused run creates nothing');

    const add = await berth(['target', 'add', 'priv', '--context', contextFor(TASK_USER), '-n', t.namespace, '--allow-privileged']);
    assert.equal(add.code, 0, add.stderr);
    const locked = await berth(['run', '--target', 'priv', '-c', join(home.dir, 'caps.yml'), '--image', BUSYBOX]);
    assert.equal(locked.code, 0, locked.stderr);
    assert.match(locked.stdout, /^CapEff:\s+0+$/m, 'without -p, still every capability dropped');
    const privileged = await berth(['run', '--target', 'priv', '-p', '-c', join(home.dir, 'caps.yml'), '--image', BUSYBOX]);
    assert.equal(privileged.code, 0, privileged.stderr);
    assert.match(privileged.stdout, /^CapEff:\s+0*[1-9a-f][0-9a-f]*$/m, 'privileged: capabilities');
    assert.equal((await berth(['target', 'retire', 'priv'])).code, 0);
  });

  it("gc deletes the expired task objects there (only berth task's); retire deletes the rest, a running step's too, and forgets the target", async () => {
    const fake = (name: string, component: string, expires: string) => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name,
        labels: { 'app.kubernetes.io/managed-by': 'berth', 'app.kubernetes.io/component': component },
        annotations: { 'berth.dev/expires-at': expires },
      },
      spec: { containers: [{ name: 'main', image: BUSYBOX, command: ['sleep', '300'] }], terminationGracePeriodSeconds: 0 },
    });
    const past = new Date(Date.now() - 60_000).toISOString().replace(/\.\d+Z$/, 'Z');
    const future = new Date(Date.now() + 3_600_000).toISOString().replace(/\.\d+Z$/, 'Z');
    for (const pod of [fake('old-task', 'task', past), fake('new-task', 'task', future), fake('old-shim', 'shim', past)]) {
      await kubectlOk(['-n', t.namespace, 'create', '-f', '-'], { input: JSON.stringify(pod) });
    }
    const gc = await berth(['target', 'gc', 'ci']);
    assert.equal(gc.code, 0, gc.stderr);
    assert.equal(gc.stdout, `pod/old-task (target ci, namespace ${t.namespace}) deleted\n`);

    // A cache of the target's: retire deletes it too.
    const cached = await berth(['run', '--target', 'ci', '-c', join(home.dir, 'cached.yml'), '--image', BUSYBOX]);
    assert.equal(cached.code, 0, cached.stderr);
    const claims = (await kubectlOk(['-n', t.namespace, 'get', 'persistentvolumeclaims', '-l', 'app.kubernetes.io/component=task-cache', '-o', 'name']))
      .split('\n')
      .filter(Boolean);
    assert.equal(claims.length, 1, `the task made its cache: ${claims.join(' ')}`);

    const sleeper = start(['run', '--target', 'ci', '-c', join(FIXTURES, 'sleeper.yml'), '--image', BUSYBOX]);
    await eventually('the task prints started', () => sleeper.out.stdout.includes('started\n'), { timeoutMs: 90_000 });
    const retire = await berth(['target', 'retire', 'ci']);
    assert.equal(retire.code, 0, retire.stderr);
    assert.match(retire.stdout, /^pod\/new-task \(target ci/m);
    assert.match(retire.stdout, /^pod\/task-[0-9a-f]{8} \(target ci/m);
    assert.match(retire.stdout, new RegExp(`^${claims[0]} \\(target ci, namespace ${t.namespace}\\) deleted$`, 'm'), retire.stdout);
    assert.match(retire.stdout, /^target ci retired$/m);
    const code = await sleeper.exited;
    assert.ok(code !== 0 && code !== null, `the step whose pod was deleted does not succeed (exit ${code}): ${sleeper.out.stderr}`);
    // The params Secret of the running step went with its pod (ownerReferences), the cache's claim is gone; berth serve's and the shim's objects stay.
    const everything = async (): Promise<string> =>
      (await kubectlOk(['-n', t.namespace, 'get', 'pods,secrets,configmaps,persistentvolumeclaims', '-l', 'app.kubernetes.io/managed-by=berth', '-o', 'name']))
        .split('\n')
        .filter(Boolean)
        .join(' ');
    await eventually('nothing of berth task is left, caches included', async () => (await everything()) === 'pod/old-shim', { timeoutMs: 60_000 });
    await kubectlOk(['-n', t.namespace, 'delete', 'pod', 'old-shim', '--grace-period=0']);
    const ls = await berth(['target', 'ls']);
    assert.doesNotMatch(ls.stdout, /^ci /m, 'the target is forgotten');
    const gone = await berth(['run', '--target', 'ci', '-c', join(FIXTURES, 'print-param.yml'), '--image', BUSYBOX]);
    assert.equal(gone.code, 2);
    assert.match(gone.stderr, /no target ci in .*: add it with `berth task target add ci/);
  });
});
