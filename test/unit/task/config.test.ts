import { test } from 'node:test';
import assert from 'node:assert/strict';
import { imageOf, memoryBytes, parseTaskConfig, TaskConfigError } from '../../../src/task/config.js';

const problemsOf = (text: string): string[] => {
  try {
    parseTaskConfig(text, 'task.yml');
  } catch (err) {
    assert.ok(err instanceof TaskConfigError, String(err));
    return err.problems;
  }
  assert.fail('the config was accepted');
};

test('a full config is read as Concourse reads it', () => {
  const c = parseTaskConfig(
    [
      'platform: linux',
      'image_resource:',
      '  type: registry-image',
      '  source: { repository: golang, tag: "1.22" }',
      'inputs:',
      '  - name: repo',
      '  - name: cache',
      '    path: deps/cache',
      '    optional: true',
      'outputs:',
      '  - name: bin',
      'params: { A: 1, B: ~ }',
      'run:',
      '  path: repo/ci/test.sh',
      '  args: [-v, 2]',
      '  dir: repo',
      '  user: "1000"',
      'container_limits: { cpu: 512, memory: 512MB }',
    ].join('\n'),
    'task.yml',
  );
  assert.equal(c.platform, 'linux');
  assert.deepEqual(c.inputs, [
    { name: 'repo', path: 'repo', optional: false },
    { name: 'cache', path: 'deps/cache', optional: true },
  ]);
  assert.deepEqual(c.outputs, [{ name: 'bin', path: 'bin' }]);
  assert.deepEqual(c.params, { A: '1', B: '' });
  assert.deepEqual(c.run, { path: 'repo/ci/test.sh', args: ['-v', '2'], dir: 'repo', user: '1000' });
  assert.deepEqual(c.containerLimits, { cpu: 512, memory: 512 * 1024 * 1024 });
  assert.equal(imageOf(c, undefined, 'task.yml'), 'golang:1.22');
  assert.equal(imageOf(c, 'localhost/x:1', 'task.yml'), 'localhost/x:1');
});

test('missing platform and run.path, unknown keys, duplicate names: each with its field and line', () => {
  const problems = problemsOf(
    ['ouputs: []', 'inputs:', '  - name: a', '  - name: a', 'outputs:', '  - name: o', '  - name: o', 'run:', '  args: []', '  user2: x'].join('\n'),
  );
  const text = problems.join('\n');
  assert.match(text, /unknown field ouputs \(line 1\)/);
  assert.match(text, /missing 'platform' \(line 1\)/);
  assert.match(text, /inputs\[1\]: duplicate input name "a" \(line 4\) \(first \(line 3\)\)/);
  assert.match(text, /outputs\[1\]: duplicate output name "o" \(line 7\)/);
  assert.match(text, /missing path to executable to run: run\.path \(line 9\)/);
  assert.match(text, /unknown field run\.user2 \(line 10\)/);
});

test('inputs without a name, paths leaving the working directory, two inputs at one path', () => {
  const text = problemsOf(
    ['platform: linux', 'inputs:', '  - path: x', '  - name: b', '    path: ../up', '  - name: c', '    path: d', '  - name: d', 'run: { path: ls }'].join(
      '\n',
    ),
  ).join('\n');
  assert.match(text, /input in position 0 is missing a name \(line 3\)/);
  assert.match(text, /inputs\[1\]\.path "\.\.\/up" must stay inside the working directory/);
  assert.match(text, /inputs "c" and "d" have the same path "d"/);
});

test('an input and an output may share a path', () => {
  const c = parseTaskConfig('platform: linux\ninputs: [{name: repo}]\noutputs: [{name: repo}]\nrun: {path: ls}\n', 't.yml');
  assert.equal(c.outputs[0].path, 'repo');
});

test('image_resource: digest, unsupported types, rootfs_uri, no image', () => {
  const withDigest = parseTaskConfig(
    'platform: linux\nimage_resource: {type: docker-image, source: {repository: alpine}, version: {digest: "sha256:abc"}}\nrun: {path: ls}\n',
    't.yml',
  );
  assert.equal(imageOf(withDigest, undefined, 't.yml'), 'alpine@sha256:abc');
  const mock = parseTaskConfig('platform: linux\n\nimage_resource:\n  type: mock\n  source: {mirror_self: true}\nrun: {path: ls}\n', 't.yml');
  assert.throws(() => imageOf(mock, undefined, 't.yml'), /image_resource.type "mock" \(line 4\) is not supported.*--image/);
  assert.equal(imageOf(mock, 'busybox', 't.yml'), 'busybox', '--image replaces any image_resource');
  const rootfs = parseTaskConfig('platform: linux\nrootfs_uri: raw:///x\nrun: {path: ls}\n', 't.yml');
  assert.throws(() => imageOf(rootfs, undefined, 't.yml'), /rootfs_uri is not supported/);
  const none = parseTaskConfig('platform: linux\nrun: {path: ls}\n', 't.yml');
  assert.throws(() => imageOf(none, undefined, 't.yml'), /no image_resource.*--image/);
});

test('container_limits: shares and memory sizes', () => {
  assert.equal(memoryBytes('1073741824'), 1073741824);
  assert.equal(memoryBytes('512MB'), 512 * 1024 ** 2);
  assert.equal(memoryBytes('1gb'), 1024 ** 3);
  assert.equal(memoryBytes('64K'), 64 * 1024);
  assert.equal(memoryBytes('lots'), undefined);
  assert.match(
    problemsOf('platform: linux\ncontainer_limits: {cpu: -1, memory: lots, disk: 1}\nrun: {path: ls}\n').join('\n'),
    /unknown field container_limits\.disk[\s\S]*cpu must be a whole number[\s\S]*memory must be bytes/,
  );
});

test('YAML syntax errors and a document that is not a mapping are refused', () => {
  assert.match(problemsOf('platform: [linux\n').join('\n'), /./);
  assert.match(problemsOf('- a\n- b\n').join('\n'), /must be a YAML mapping/);
  assert.match(problemsOf('platform: linux\nplatform: linux\nrun: {path: ls}\n').join('\n'), /unique/i);
});

test('syntax errors are sentences: no dangling colon, and a second document named as such', () => {
  assert.throws(
    () => parseTaskConfig('platform: linux\nrun:\n\tpath: x\n', 't.yml'),
    (e: Error) => /Tabs are not allowed as indentation at line 3, column 1$/m.test(e.message),
  );
  assert.throws(
    () => parseTaskConfig('platform: linux\n---\nplatform: linux\n', 't.yml'),
    /the file holds more than one YAML document \(---\) at line 2, column 1: a Concourse file is one document/,
  );
});
