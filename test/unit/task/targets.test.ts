import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  describeRule,
  grants,
  missingSentence,
  needName,
  parseRoleRules,
  permissionReport,
  shippedRoleRules,
  TASK_NEEDS,
  type Need,
} from '../../../src/task/target-check.js';
import {
  findTarget,
  parseTargets,
  readTargets,
  targetsFile,
  TargetStoreError,
  updateTargets,
  writeTargets,
  type Target,
} from '../../../src/task/target-store.js';
import { activeTargetName, targetForRun } from '../../../src/task/targets.js';
import { labelValue, planTaskPod } from '../../../src/task/pod-plan.js';
import { parseTaskConfig } from '../../../src/task/config.js';
import { layOut } from '../../../src/task/layout.js';
import { scratchDir } from '../../util/scratch.js';

const temp = (): { dir: string; remove(): void } => {
  const dir = scratchDir('berth-targets-');
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
};
const ci: Target = { name: 'ci', context: 'dev', namespace: 'builds', allowPrivileged: false, landed: false };

test('targets file: $XDG_CONFIG_HOME/berth/task-targets.yaml, else ~/.config', () => {
  assert.equal(targetsFile({ XDG_CONFIG_HOME: '/x' }, '/home/u'), '/x/berth/task-targets.yaml');
  assert.equal(targetsFile({}, '/home/u'), '/home/u/.config/berth/task-targets.yaml');
});

test('store: written with mode 0600 (also over a looser file), read back the same; a missing file is no targets', () => {
  const t = temp();
  try {
    const file = join(t.dir, 'berth', 'task-targets.yaml');
    assert.deepEqual(readTargets(file), []);
    const other: Target = { name: 'b', kubeconfig: '/k/config', context: 'c', namespace: 'n', podTemplate: '/t.yaml', allowPrivileged: true, landed: true };
    writeTargets(file, [other, ci]);
    assert.equal(statSync(file).mode & 0o777, 0o600);
    assert.deepEqual(readTargets(file), [other, ci]);
    writeFileSync(file, readFileSync(file), { mode: 0o644 });
    updateTargets(file, (all) => all.filter((x) => x.name !== 'b'));
    assert.equal(statSync(file).mode & 0o777, 0o600);
    assert.deepEqual(readTargets(file), [ci]);
  } finally {
    t.remove();
  }
});

test('store: a damaged file is an error with the file, the place and the fix', () => {
  const bad = (text: string, re: RegExp) =>
    assert.throws(
      () => parseTargets(text, '/f.yaml'),
      (e: Error) => e instanceof TargetStoreError && re.test(e.message) && /\/f\.yaml/.test(e.message) && /berth task target add/.test(e.message),
    );
  bad('targets: [', /not valid YAML \(line 1/);
  bad('- a\n', /must be a mapping with `targets:`/);
  bad('targets: {a: 1}\n', /`targets` must be a list/);
  bad('targets:\n  - name: a\n    context: c\n    namespace: n\n    colour: red\n', /targets\[0\] has an unknown key `colour` \(line 5\)/);
  bad('targets:\n  - name: a\n    context: c\n', /targets\[0\] has no `namespace`/);
  bad('targets:\n  - {name: a, context: c, namespace: n, landed: "yes"}\n', /targets\[0\]\.landed must be true or false/);
  bad('targets:\n  - {name: a, context: c, namespace: n}\n  - {name: a, context: d, namespace: n}\n', /target a is listed twice/);
  bad('targets:\n  - {name: "a b", context: c, namespace: n}\n', /not a valid target name/);
  assert.deepEqual(parseTargets('', '/f'), []);
  assert.deepEqual(parseTargets('targets:\n', '/f'), []);
});

test('an unknown target names `target add`; a landed one is refused with how to un-land it; flags and --target do not mix', () => {
  const t = temp();
  try {
    const env = { XDG_CONFIG_HOME: t.dir };
    const file = targetsFile(env);
    assert.throws(() => findTarget([ci], 'prod', file), /no target prod in .* \(known: ci\): add it with `berth task target add prod/);
    writeTargets(file, [ci, { ...ci, name: 'old', landed: true }]);
    assert.throws(() => targetForRun({ target: 'old' }, env), /target old is landed .*no new steps start there.*berth task target unland old/);
    assert.throws(() => targetForRun({ target: 'ci', namespace: 'x' }, env), /--target ci says where the steps run: drop -n/);
    const { env: out, target } = targetForRun({ target: 'ci' }, { ...env, BERTH_KUBECONFIG: '/elsewhere' });
    assert.equal(out.BERTH_CONTEXT, 'dev');
    assert.equal(out.BERTH_NAMESPACE, 'builds');
    assert.equal(out.BERTH_KUBECONFIG, undefined, "a target without a kubeconfig resolves as kubectl does, not with the caller's BERTH_KUBECONFIG");
    assert.deepEqual(target, { name: 'ci', podTemplate: undefined, allowPrivileged: false });
    assert.equal(activeTargetName('ci', env), 'ci');
  } finally {
    t.remove();
  }
});

test('without --target: the flags as settings, locked down, named after the current context', () => {
  const t = temp();
  try {
    const kubeconfig = join(t.dir, 'config');
    writeFileSync(
      kubeconfig,
      'apiVersion: v1\nkind: Config\ncurrent-context: here\nclusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]\nusers: [{name: u, user: {token: x}}]\ncontexts: [{name: here, context: {cluster: c, user: u}}, {name: there, context: {cluster: c, user: u}}]\n',
    );
    const { env, target } = targetForRun({ context: 'there', namespace: 'n' }, { HOME: t.dir });
    assert.equal(env.BERTH_CONTEXT, 'there');
    assert.equal(env.BERTH_NAMESPACE, 'n');
    assert.deepEqual(target, { allowPrivileged: false });
    assert.equal(activeTargetName(undefined, { HOME: t.dir, KUBECONFIG: kubeconfig }), 'here');
    assert.equal(activeTargetName(undefined, { HOME: t.dir, KUBECONFIG: kubeconfig, BERTH_CONTEXT: 'there' }), 'there');
  } finally {
    t.remove();
  }
});

const ROLE = `rules:
  - apiGroups: [""]
    resources: ["pods"]
    verbs: ["create", "get"]
  - apiGroups: [""]
    resources: ["pods/log"]
    verbs: ["get"]
  - apiGroups: ["*"]
    resources: ["*/exec"]
    verbs: ["*"]
`;
const need = (verb: string, resource: string): Need => ({ verb, resource, group: '', why: 'w' });

test('rule naming: the rule that grants a permission, with its number, line and contents; wildcards as RBAC reads them', () => {
  const rules = parseRoleRules(ROLE, 'role.yaml');
  assert.deepEqual(
    rules.map((r) => [r.number, r.line]),
    [
      [1, 2],
      [2, 5],
      [3, 8],
    ],
  );
  assert.equal(grants(rules[0], need('get', 'pods')), true);
  assert.equal(grants(rules[0], need('get', 'pods/log')), false, 'a resource does not grant its subresources');
  assert.equal(grants(rules[0], need('delete', 'pods')), false);
  assert.equal(grants(rules[2], need('create', 'pods/exec')), true);
  assert.equal(grants(rules[2], need('create', 'pods')), false);
  assert.equal(describeRule(rules[1], 'role.yaml'), 'rule 2 of role.yaml (line 5: apiGroups [""], resources ["pods/log"], verbs ["get"])');
  assert.equal(
    missingSentence(need('get', 'pods/log'), rules, 'role.yaml'),
    'cannot get pods/log (needed to w): granted by rule 2 of role.yaml (line 5: apiGroups [""], resources ["pods/log"], verbs ["get"])',
  );
  assert.match(missingSentence(need('delete', 'pods'), rules, 'role.yaml'), /granted by no rule of role\.yaml: add one/);
});

test('the report: one line per permission; each missing one a sentence naming its rule, then the fix', () => {
  const rules = parseRoleRules(ROLE, 'role.yaml');
  const { lines, problems } = permissionReport(
    [
      { need: need('get', 'pods'), allowed: true },
      { need: need('get', 'pods/log'), allowed: false },
      { need: need('create', 'pods'), allowed: undefined },
    ],
    rules,
    'role.yaml',
    'ns',
  );
  assert.deepEqual(lines, ['yes  get pods      w', 'no   get pods/log  w', '?    create pods   w']);
  assert.equal(problems.length, 3);
  assert.match(problems[0], /^cannot get pods\/log .*rule 2 of role\.yaml/);
  assert.match(problems[1], /create pods could not be checked/);
  assert.match(problems[2], /^fix: kubectl apply -n ns -f role\.yaml/);
  assert.deepEqual(permissionReport([{ need: need('get', 'pods'), allowed: true }], rules, 'role.yaml', 'ns').problems, []);
});

test('the shipped Role grants every permission berth task needs, and each of its rules is needed (it is minimal)', () => {
  const { rules, file } = shippedRoleRules();
  assert.equal(file, 'deploy/rbac/task-role.yaml');
  for (const n of TASK_NEEDS)
    assert.ok(
      rules.some((r) => grants(r, n)),
      `${needName(n)} is granted by no rule of ${file}`,
    );
  for (const r of rules) {
    for (const resource of r.resources) {
      for (const verb of r.verbs)
        assert.ok(
          TASK_NEEDS.some((n) => n.verb === verb && n.resource === resource),
          `rule ${r.number} grants ${verb} ${resource}, which berth task does not need`,
        );
    }
  }
});

test('objects carry the step and the target as labels (made label-safe) and the step whole in an annotation; privileged only when asked', () => {
  const config = parseTaskConfig('platform: linux\nrun: {path: ls}\n', 't.yml');
  const layout = layOut(config, { inputs: [], outputs: [], args: [], workDir: '/tmp/build/00000000', cwd: '/here' });
  const ctx = { namespace: 'n', owner: 'me', runId: 'abcd1234', now: new Date(0), ttlSeconds: 60, image: 'i', helperImage: 'h' };
  const pod = planTaskPod(config, layout, {}, { ...ctx, step: 'build & test', target: 'shim@berth-dev' });
  assert.equal(pod.metadata?.labels?.['berth.dev/step'], 'build-test');
  assert.equal(pod.metadata?.labels?.['berth.dev/target'], 'shim-berth-dev');
  assert.equal(pod.metadata?.annotations?.['berth.dev/step'], 'build & test');
  assert.ok(pod.metadata?.annotations?.['berth.dev/expires-at']);
  assert.deepEqual(pod.spec?.containers[0].securityContext, { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } });
  assert.deepEqual(planTaskPod(config, layout, {}, { ...ctx, privileged: true }).spec?.containers[0].securityContext, { privileged: true });
  assert.equal(labelValue(`-${'x'.repeat(70)}`), 'x'.repeat(62));
  assert.equal(labelValue('arn:aws:eks:eu-west-1:1:cluster/ci'), 'arn-aws-eks-eu-west-1-1-cluster-ci');
});
