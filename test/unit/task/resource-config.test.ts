import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parsePlanFile, PlanConfigError } from '../../../src/task/plan-config.js';
import { stringify } from 'yaml';
import { parseTaskConfig } from '../../../src/task/config.js';
import { tarEntries } from '../../../src/task/inputs.js';
import { layOut } from '../../../src/task/layout.js';
import { detectInputs } from '../../../src/task/resource-config.js';
import { requestTar, scriptTask } from '../../../src/task/resource-step.js';

const TYPES = [
  'resource_types:',
  '  - name: test',
  '    type: registry-image',
  '    source: { repository: localhost/berth/test-resource, tag: "1" }',
  '    defaults: { region: eu }',
];

const problemsOf = (text: string): string => {
  try {
    parsePlanFile(text, 'plan.yml');
  } catch (err) {
    assert.ok(err instanceof PlanConfigError, String(err));
    return err.problems.join('\n');
  }
  assert.fail('the plan was accepted');
};

test('resource_types, resources, get and put read as a Concourse pipeline declares them', () => {
  const plan = parsePlanFile(
    [
      ...TYPES,
      'resources:',
      '  - name: repo',
      '    type: test',
      '    source: { versions: "1 2", depth: 1, nested: { on: yes } }',
      '  - name: pinned',
      '    type: test',
      '    version: { ver: "7" }',
      'plan:',
      '  - get: src',
      '    resource: repo',
      '    params: { depth: 3, list: [a, 1] }',
      '  - get: pinned',
      '  - get: repo',
      '    version: { ver: 2 }',
      '  - put: repo',
      '    inputs: detect',
      '    params: { file: src/version }',
      '    get_params: { skip: true }',
      '    ensure: { put: pinned, no_get: true, inputs: [src] }',
    ].join('\n'),
    'plan.yml',
  );
  assert.deepEqual(plan.warnings, []);
  const [src, pinned, repo, put] = plan.steps;
  assert.ok(src.kind === 'get' && pinned.kind === 'get' && repo.kind === 'get' && put.kind === 'put');
  assert.equal(src.name, 'src');
  assert.equal(src.resource.name, 'repo');
  assert.equal(src.resource.type.image, 'localhost/berth/test-resource:1');
  // Sources and params as JSON: numbers as numbers, YAML 1.1 booleans (also the key `on`, as sigs.k8s.io/yaml
  // turns it into "true" for Concourse), the type's defaults under the source.
  assert.deepEqual(src.resource.source, { region: 'eu', versions: '1 2', depth: 1, nested: { true: true } });
  assert.deepEqual(src.params, { depth: 3, list: ['a', 1] });
  assert.equal(src.version, 'latest');
  assert.deepEqual(pinned.version, { ver: '7' }, "a resource's version: pins its gets");
  assert.deepEqual(repo.version, { ver: '2' }, 'version values are strings');
  assert.equal(put.inputs, 'detect');
  assert.deepEqual(put.getParams, { skip: true });
  assert.equal(put.noGet, false);
  assert.ok(put.ensure?.kind === 'put' && put.ensure.noGet && String(put.ensure.inputs) === 'src');
});

test('the plain list of steps still reads; latest of a type without a tag', () => {
  const plan = parsePlanFile('- task: a\n  file: a.yml\n', 'plan.yml');
  assert.equal(plan.steps[0].kind, 'task');
  const latest = parsePlanFile(
    'resource_types: [{name: t, type: docker-image, source: {repository: r}}]\nresources: [{name: x, type: t}]\nplan: [{get: x}]\n',
    'p.yml',
  );
  assert.ok(latest.steps[0].kind === 'get');
  assert.equal(latest.steps[0].resource.type.image, 'r:latest');
});

test('what schedules a pipeline is ignored with a warning that names its line', () => {
  const plan = parsePlanFile(
    [...TYPES, 'resources:', '  - name: repo', '    type: test', '    check_every: 1m', '    icon: github', 'plan:', '  - get: repo', '    trigger: true'].join(
      '\n',
    ),
    'plan.yml',
  );
  assert.equal(plan.warnings.length, 3);
  assert.match(plan.warnings[0], /^resources\[0\]\.check_every \(line 9\) is ignored: berth checks a resource when a get step needs/);
  assert.match(plan.warnings[1], /^resources\[0\]\.icon \(line 10\) is ignored/);
  assert.match(plan.warnings[2], /^plan\[0\] \(get repo\): trigger \(line 13\) is ignored: nothing triggers a plan but berth task plan run/);
});

test('what needs a pipeline, or is not an image, is refused with the field and the line', () => {
  const text = problemsOf(
    [
      'resource_types:',
      '  - name: git',
      '    type: git',
      '  - name: priv',
      '    type: registry-image',
      '    source: { repository: r }',
      '    privileged: true',
      '  - name: priv',
      '    type: registry-image',
      '    source: { repository: r }',
      'resources:',
      '  - name: repo',
      '    type: s3',
      '    bogus: 1',
      '  - name: ok',
      '    type: priv',
      '    version: every',
      'plan:',
      '  - get: ok',
      '    version: every',
      '    passed: [build]',
      '  - get: ok',
      '    version: [1]',
      '  - put: ok',
      '    inputs: some',
      '    no_get: maybe',
      '    get_params: [x]',
      '    timeout: 1h',
      '  - get: nowhere',
      '  - put: ok',
      '    fetch: yes',
    ].join('\n'),
  );
  assert.match(text, /resource_types\[0\]\.type git \(line 3\): berth runs resource types from images: registry-image or docker-image/);
  assert.match(text, /resource_types\[0\]: source\.repository is missing \(line 2\)/);
  assert.match(text, /resource_types\[1\]\.privileged \(line 7\): privileged resource types are refused/);
  assert.match(text, /resource_types\[2\]: duplicate name priv \(line 8\)/);
  assert.match(text, /resources\[0\]: unknown field bogus \(line 14\): a resource has name, type, source, version/);
  assert.match(text, /resources\[0\]\.type s3 \(line 13\): no resource type `s3` in resource_types: berth has no built-in resource types; declare it/);
  assert.match(text, /resources\[1\]\.version \(line 17\): latest, or a pinned version/);
  assert.match(text, /plan\[0\] \(get ok\): version: every \(line 20\) needs a pipeline's version history/);
  assert.match(text, /plan\[0\] \(get ok\): passed \(line 21\): needs a pipeline's build history/);
  assert.match(text, /plan\[1\] \(get ok\)\.version \(line 23\): latest, or a pinned version/);
  assert.match(text, /plan\[2\] \(put ok\)\.inputs \(line 25\): all, detect or a list of artifact names/);
  assert.match(text, /plan\[2\] \(put ok\)\.no_get must be true or false \(line 26\)/);
  assert.match(text, /plan\[2\] \(put ok\)\.get_params must be a mapping \(line 27\)/);
  assert.match(text, /plan\[2\]: timeout \(line 28\): step timeouts are not supported yet/);
  assert.match(text, /plan\[3\] \(get nowhere\): no resource `nowhere` \(line 29\): declare it under resources: \(the plan has `ok`\)/);
  assert.match(text, /plan\[4\]: unknown field fetch \(line 31\): a put step has put, resource, params, get_params, inputs, no_get/);
  assert.doesNotMatch(text, /unknown field (timeout|ensure)/);
});

test("put inputs: detect takes the artifacts named by the first segment of its params' strings", () => {
  assert.deepEqual(
    detectInputs({ file: 'built/next', deep: { list: ['notes/n', 'elsewhere/x', 3] }, plain: 'repo' }, ['built', 'notes', 'repo', 'unused']).sort(),
    ['built', 'notes', 'repo'],
  );
  assert.deepEqual(detectInputs({}, ['built']), []);
});

test("each resource script is a task whose pod has Concourse's resource container layout", async () => {
  const lay = (script: 'check' | 'in' | 'out', artifacts: string[], fetch: boolean) => {
    const { config, shown } = scriptTask(script, artifacts, fetch);
    return {
      shown,
      layout: layOut(parseTaskConfig(stringify(config), 'r.yml'), {
        inputs: [{ name: '.berth-io', dir: '-' }, ...artifacts.map((name) => ({ name, dir: '-' }))],
        outputs: [],
        args: [],
        workDir: '/tmp/build',
        cwd: '/here',
        inPlan: true,
        capture: ['.berth-io', '.berth-fetched'],
      }),
    };
  };
  const get = lay('in', [], true);
  assert.equal(get.shown, '/opt/resource/in /tmp/build/get');
  assert.equal(get.layout.cwd, '/tmp/build/get');
  assert.deepEqual(get.layout.command, [
    '/bin/sh',
    '-c',
    'exec /opt/resource/in "$@" </tmp/build/.berth/io/request.json >/tmp/build/.berth/io/response.json',
    'in',
    '/tmp/build/get',
  ]);
  assert.deepEqual(
    get.layout.outputs.map((o) => [o.name, o.path, o.capture]),
    [
      ['.berth-io', '.berth/io', true],
      ['.berth-fetched', 'get', true],
    ],
  );
  const put = lay('out', ['built', 'notes'], false);
  assert.equal(put.layout.cwd, '/tmp/build/put');
  assert.deepEqual(put.layout.command.slice(3), ['out', '/tmp/build/put']);
  assert.deepEqual(
    put.layout.inputs.map((i) => i.path),
    ['.berth/io', 'put/built', 'put/notes'],
  );
  const check = lay('check', [], false);
  assert.equal(check.shown, '/opt/resource/check');
  assert.deepEqual(check.layout.command.slice(3), ['check']);
  // The request (with the source's credentials) is a file of the inputs tar, not a value of the pod spec.
  const [entry] = await tarEntries(await requestTar({ source: { password: 's3cret' }, version: null }));
  assert.equal(entry.header.name, 'request.json');
  assert.equal(entry.data.toString(), '{"source":{"password":"s3cret"},"version":null}');
});
