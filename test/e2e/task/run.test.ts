// berth task run through the real CLI, as the user bound to exactly deploy/rbac/task-role.yaml: real task
// files from concourse/examples (image swapped with --image), and behaviour as fly execute would show it.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { berthCli, kubectlOk } from '../harness/cluster.js';
import { eventually } from '../../util/eventually.js';
import { FIXTURES, runCommand, setUpTask, tempTree, type TaskEnv } from './task-env.js';

const fixture = (name: string): string => join(FIXTURES, name);

describe('berth task run', () => {
  let t: TaskEnv;
  before(async () => {
    t = await setUpTask('task');
  });
  after(async () => {
    await t?.close();
  });

  it('generic-outputs: the outputs land in the -o folders', async () => {
    const out = tempTree({});
    try {
      const r = await t.run(['-c', fixture('generic-outputs.yml'), '-o', `main=${out.dir}/main`, '-o', `ci=${out.dir}/ci`]);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(readFileSync(join(out.dir, 'main/version'), 'utf8'), 'hello-world\n');
      assert.equal(readFileSync(join(out.dir, 'ci/version'), 'utf8'), 'hi ci\n');
      assert.deepEqual(readdirSync(out.dir).sort(), ['ci', 'main'], 'only the outputs asked for are downloaded');
      assert.match(r.stderr, /^initializing$/m);
      assert.match(r.stderr, /^succeeded$/m);
      assert.equal(r.stdout, '');
    } finally {
      out.remove();
    }
  });

  it('print-param: params become env vars; null is empty; the shell overrides a listed param', async () => {
    const plain = await t.run(['-c', fixture('print-param.yml')]);
    assert.equal(plain.code, 0, plain.stderr);
    assert.equal(plain.stdout, 'default text to echo from task config file and\n');
    const overridden = await t.run(['-c', fixture('print-param.yml')], { extraEnv: { ECHO_ME: 'from the shell', ALSO_ME: 'me too', NOT_LISTED: 'x' } });
    assert.equal(overridden.code, 0, overridden.stderr);
    assert.equal(overridden.stdout, 'from the shell and me too\n');
  });

  it('generic-inputs: a missing required input fails before any pod; given, each input is a folder of the working directory', async () => {
    const missing = await t.run(['-c', fixture('generic-inputs.yml')]);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /missing required input `main`: pass -i main=DIR/);
    assert.deepEqual(await t.leftovers(), []);
    const tree = tempTree({ 'main/a': 'a', 'dev/b': 'b', 'ci/c': 'c' });
    try {
      const r = await t.run(['-c', fixture('generic-inputs.yml'), '-i', `main=${tree.dir}/main`, '-i', `dev=${tree.dir}/dev`, '-i', `ci=${tree.dir}/ci`]);
      assert.equal(r.code, 0, r.stderr);
      for (const name of ['main', 'dev', 'ci']) assert.match(r.stdout, new RegExp(` ${name}\\n`));
      const unknown = await t.run(['-c', fixture('generic-inputs.yml'), '-i', `nope=${tree.dir}/main`]);
      assert.equal(unknown.code, 2);
      assert.match(unknown.stderr, /unknown input `nope`/);
      const file = await t.run(['-c', fixture('generic-inputs.yml'), '-i', `main=${tree.dir}/main/a`, '-i', `dev=${tree.dir}/dev`, '-i', `ci=${tree.dir}/ci`]);
      assert.equal(file.code, 2);
      assert.match(file.stderr, /is a file, not a folder/);
    } finally {
      tree.remove();
    }
  });

  it('binary-test: the executable lives in the input; stdout and stderr stay apart', async () => {
    const tree = tempTree({ 'ascii-banner': ['#!/bin/sh\necho "banner: $*"\n', 0o755] });
    try {
      const r = await t.run(['-c', fixture('binary-test.yml'), '-i', `binary=${tree.dir}`]);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout, 'banner: -list\nbanner: concourse\nbanner: plane\nbanner: pilot\n');
      assert.match(r.stderr, /^\+ \.\/binary\/ascii-banner concourse$/m, 'sh -x traces go to stderr');
      // One input and no -i: fly execute takes the current folder.
      const here = await t.run(['-c', fixture('binary-test.yml')], { cwd: tree.dir });
      assert.equal(here.code, 0, here.stderr);
      assert.equal(here.stdout, r.stdout);
    } finally {
      tree.remove();
    }
  });

  it("exits with the task's own code; -- ARGS are appended to run.args", async () => {
    const r = await t.run(['-c', fixture('exit-code.yml'), '--', 'a', 'b c']);
    assert.equal(r.code, 7);
    assert.equal(r.stdout, 'out a b c\n');
    assert.match(r.stderr, /^err a b c$/m);
    assert.match(r.stderr, /^failed$/m);
    const zero = await t.run(['-c', fixture('exit-code.yml')], { extraEnv: { CODE: '0' } });
    assert.equal(zero.code, 0, zero.stderr);
  });

  it('a failed task still has its outputs downloaded, and berth exits with its code', async () => {
    const out = tempTree({});
    try {
      const r = await t.run(['-c', fixture('fail-with-output.yml'), '-o', `report=${out.dir}/report`]);
      assert.equal(r.code, 9, r.stderr);
      assert.equal(readFileSync(join(out.dir, 'report/summary'), 'utf8'), 'partial results\n');
      assert.match(r.stderr, /^tests failed$/m);
      assert.match(r.stderr, /^failed$/m);
    } finally {
      out.remove();
    }
  });

  it('run.dir, a relative run.path, an output sharing an input\'s path, params converted', async () => {
    const script = '#!/bin/sh\nset -e\necho "pwd=$(pwd)"\necho "NUMBER=$NUMBER FLAG=$FLAG NOTHING=[$NOTHING] MAP=$MAP"\necho built > ../out/built/artifact\necho changed >> input.txt\n';
    const tree = tempTree({ 'scripts/build.sh': [script, 0o755], 'input.txt': 'original\n' });
    const out = tempTree({});
    try {
      const r = await t.run(['-c', fixture('run-dir.yml'), '-i', `src=${tree.dir}`, '-o', `src=${out.dir}/src`, '-o', `built=${out.dir}/built`]);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /^pwd=\/tmp\/build\/[0-9a-f]{8}\/src$/m);
      assert.match(r.stdout, /^NUMBER=42 FLAG=true NOTHING=\[\] MAP=\{"a":"x\\u003cy","b":1\}$/m);
      assert.equal(readFileSync(join(out.dir, 'built/artifact'), 'utf8'), 'built\n');
      assert.equal(readFileSync(join(out.dir, 'src/input.txt'), 'utf8'), 'original\nchanged\n');
      assert.equal(readFileSync(join(tree.dir, 'input.txt'), 'utf8'), 'original\n', 'the local input is not written');
    } finally {
      tree.remove();
      out.remove();
    }
  });

  it('in a git work tree only what git would take is uploaded, unless --include-ignored', async () => {
    const tree = tempTree({ 'binary/ascii-banner': ['#!/bin/sh\nls /tmp/build/*/binary | tr "\\n" " "; echo\n', 0o755], 'binary/.gitignore': 'ignored.txt\n', 'binary/ignored.txt': 'x', 'binary/untracked.txt': 'y' });
    try {
      const git = (...args: string[]) => runCommand('git', ['-C', join(tree.dir, 'binary'), ...args]);
      assert.equal((await git('init', '-q')).code, 0);
      assert.equal((await git('add', 'ascii-banner', '.gitignore')).code, 0);
      const r = await t.run(['-c', fixture('binary-test.yml'), '-i', `binary=${tree.dir}/binary`]);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /^ascii-banner untracked.txt $/m);
      const all = await t.run(['-c', fixture('binary-test.yml'), '-i', `binary=${tree.dir}/binary`, '--include-ignored']);
      assert.equal(all.code, 0, all.stderr);
      assert.match(all.stdout, /^ascii-banner ignored.txt untracked.txt $/m);
    } finally {
      tree.remove();
    }
  });

  it('refuses -p, bad configs (field and line), bad cache paths, before anything is created', async () => {
    const p = await t.run(['-c', fixture('print-param.yml'), '-p']);
    assert.equal(p.code, 2);
    assert.match(p.stderr, /-p \(privileged\) is refused/);
    const usage = await t.run(['-c', fixture('print-param.yml'), '-i', 'no-equals-sign']);
    assert.equal(usage.code, 2, 'a refused command line is berth\'s failure');
    assert.match(usage.stderr, /-i no-equals-sign: expected NAME=DIR/);
    const bad = await t.run(['-c', fixture('bad-key.yml')]);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /unknown field ouputs \(line 3\)/);
    const noImage = await t.run(['-c', fixture('print-param.yml')], { taskImage: true });
    assert.equal(noImage.code, 2);
    assert.match(noImage.stderr, /image_resource.type "mock" \(line 6\) is not supported/);
    const cached = tempTree({ 'task.yml': 'platform: linux\ninputs:\n  - name: repo\ncaches:\n  - path: repo/.cache\nrun:\n  path: true\n' });
    try {
      const c = await t.run(['-c', join(cached.dir, 'task.yml'), '-i', `repo=${cached.dir}`]);
      assert.equal(c.code, 2);
      assert.match(c.stderr, /caches: path "repo\/\.cache" overlaps the input `repo`/);
      assert.equal(await kubectlOk(['-n', t.namespace, 'get', 'pvc', '-o', 'name']), '', 'no cache was made');
    } finally {
      cached.remove();
    }
    const own = await t.run(['-c', fixture('exit-code.yml')], { taskImage: true, extraEnv: { CODE: '0' } });
    assert.equal(own.code, 0, `a registry-image image_resource names the pod's image: ${own.stderr}`);
    assert.deepEqual(await t.leftovers(), []);
  });

  it('SIGTERM mid-task: exit 3, the pod and its Secret are gone; params are not in the pod spec', async () => {
    const child = spawn(process.execPath, [berthCli, 'task', 'run', '-c', fixture('sleeper.yml'), '--image', 'localhost/berth/busybox:1'], { env: t.env(), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    await eventually('the task prints started', () => stdout.includes('started\n'), { timeoutMs: 60_000 });
    const spec = await kubectlOk(['-n', t.namespace, 'get', 'pods', '-l', 'app.kubernetes.io/managed-by=berth', '-o', 'json']);
    assert.doesNotMatch(spec, /do-not-print/, 'the param is in a Secret, not in the pod spec');
    assert.match(spec, /secretKeyRef/);
    const secret = JSON.parse(await kubectlOk(['-n', t.namespace, 'get', 'secrets', '-l', 'app.kubernetes.io/managed-by=berth', '-o', 'json'])) as { items: Array<{ metadata: { ownerReferences?: Array<{ kind: string }> } }> };
    assert.equal(secret.items.length, 1);
    assert.equal(secret.items[0].metadata.ownerReferences?.[0]?.kind, 'Pod');
    child.kill('SIGTERM');
    assert.equal(await exited, 3, stderr);
    assert.match(stderr, /^interrupted$/m);
    assert.deepEqual(await t.leftovers(), [], 'nothing of the task is left in the namespace');
  });
});
