// What comes back from a task, as fly execute brings it back: every file of an output (hard links too,
// also between plan steps), each -o folder asked for, nothing written when berth is interrupted while it
// reads, and -o/-i mistakes refused before anything is created. Through the real CLI, as the user bound
// to exactly deploy/rbac/task-role.yaml.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createReadStream, existsSync, readFileSync, readdirSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { berthCli, BUSYBOX } from '../harness/cluster.js';
import { eventually } from '../../util/eventually.js';
import { runCommand, setUpTask, tempTree, type TaskEnv } from './task-env.js';

/** An output with a file under three names (hard links), a symlink and a nested folder. */
const LINKED = `platform: linux
outputs: [{ name: out }]
run:
  path: sh
  args: [-ec, 'cd out && echo one > a && ln a b && mkdir -p d/e && ln a d/e/c && ln -s a s']
`;

const LINKED_PLAN = `plan:
  - task: make
    config:
      platform: linux
      outputs: [{ name: made }]
      run: { path: sh, args: [-ec, 'echo one > made/a && ln made/a made/b && mkdir made/d && ln made/a made/d/c'] }
  - task: use
    config:
      platform: linux
      inputs: [{ name: made, path: deep/m }]
      run: { path: sh, args: [-ec, 'cat deep/m/a deep/m/b deep/m/d/c'] }
`;

/** An output with a file no one may read (all capabilities are dropped: root in the outputs container neither). */
const UNREADABLE = `platform: linux
outputs: [{ name: out }]
run: { path: sh, args: [-ec, 'echo ok > out/ok && echo s > out/secret && chmod 000 out/secret'] }
`;

/** Outputs whose folder the task replaced: by a link out of the working folder, through a link on its way, by nothing. */
const REPLACED = `platform: linux
outputs: [{ name: out }, { name: deep, path: a/out }, { name: gone }]
run: { path: sh, args: [-ec, 'rm -rf out && ln -s /etc out && mkdir -p b/out && echo x > b/out/x && rm -rf a && ln -s b a && rm -rf gone'] }
`;

/** A step that puts a link in its output's place, and a step that would take that output as its input. */
const REPLACED_PLAN = `plan:
  - task: make
    config:
      platform: linux
      outputs: [{ name: out }]
      run: { path: sh, args: [-ec, 'rm -rf out && ln -s /etc out'] }
  - task: use
    config:
      platform: linux
      inputs: [{ name: out }]
      run: { path: sh, args: [-ec, 'echo the next step ran; ls -l'] }
`;

/** 400 MiB to read back: seconds of download, time enough to interrupt it. */
const BIG_OUTPUT = `platform: linux
outputs: [{ name: out }]
run: { path: sh, args: [-ec, 'head -c 419430400 /dev/zero > out/big'] }
`;

describe('berth task: outputs', () => {
  let t: TaskEnv;
  before(async () => {
    t = await setUpTask('task-outputs');
  });
  after(async () => {
    await t?.close();
  });

  it('a file the task wrote under several names (hard links) comes back under each of them', async () => {
    const tree = tempTree({ 'task.yml': LINKED });
    try {
      const r = await t.run(['-c', join(tree.dir, 'task.yml'), '-o', `out=${tree.dir}/out`]);
      assert.equal(r.code, 0, r.stderr);
      for (const name of ['a', 'b', 'd/e/c', 's']) assert.equal(readFileSync(join(tree.dir, 'out', name), 'utf8'), 'one\n', `out/${name}`);
      assert.equal(statSync(join(tree.dir, 'out/a')).ino, statSync(join(tree.dir, 'out/b')).ino, 'still one file, as tar unpacks it');
    } finally {
      tree.remove();
    }
  });

  for (const mode of ['direct', 'through-berth']) {
    it(`--artifacts ${mode}: hard links of an artifact reach the next step at its input's path, and -o of the plan`, async () => {
      const tree = tempTree({ 'plan.yml': LINKED_PLAN });
      try {
        const r = await runCommand(
          process.execPath,
          [berthCli, 'task', 'plan', 'run', join(tree.dir, 'plan.yml'), '--image', BUSYBOX, '--artifacts', mode, '-o', `made=${tree.dir}/made`],
          { env: t.env(), timeoutMs: 180_000 },
        );
        assert.equal(r.code, 0, r.stderr);
        assert.equal(r.stdout, 'one\none\none\n');
        for (const name of ['a', 'b', 'd/c']) assert.equal(readFileSync(join(tree.dir, 'made', name), 'utf8'), 'one\n', `made/${name}`);
        assert.deepEqual(await t.leftovers(), []);
      } finally {
        tree.remove();
      }
    });
  }

  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    it(`${signal} while an output downloads: exit 3 at once, no -o folder written, nothing left`, async () => {
      const tree = tempTree({ 'task.yml': BIG_OUTPUT });
      try {
        const child = spawn(process.execPath, [berthCli, 'task', 'run', '-c', join(tree.dir, 'task.yml'), '--image', BUSYBOX, '-o', `out=${tree.dir}/out`], {
          env: t.env({ BERTH_TRACE: '1' }),
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let stderr = '';
        child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
        const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
        // the trace's line once the task ended; the outputs are read next
        await eventually('the task ended', () => /task ended, output complete/.test(stderr), { timeoutMs: 90_000 });
        child.kill(signal);
        assert.equal(await exited, 3, stderr);
        assert.match(stderr, /^interrupted$/m);
        assert.doesNotMatch(stderr, /^succeeded$|^downloaded output/m, 'berth does not go on reading after the interrupt');
        assert.equal(existsSync(join(tree.dir, 'out')), false, 'no -o folder, not even a partial one');
        assert.deepEqual(await t.leftovers(), []);
      } finally {
        tree.remove();
      }
    });
  }

  it('-o of one output twice: both folders get it, as fly execute downloads each -o', async () => {
    const tree = tempTree({ 'task.yml': LINKED });
    try {
      const r = await t.run(['-c', join(tree.dir, 'task.yml'), '-o', `out=${tree.dir}/one`, '-o', `out=${tree.dir}/two`]);
      assert.equal(r.code, 0, r.stderr);
      for (const dir of ['one', 'two']) assert.equal(readFileSync(join(tree.dir, dir, 'd/e/c'), 'utf8'), 'one\n', dir);
    } finally {
      tree.remove();
    }
  });

  it('a file the task made unreadable fails the run at once, naming the file and the fix (exit 2): no -o folder, nothing left', async () => {
    const tree = tempTree({ 'task.yml': UNREADABLE });
    try {
      const r = await t.run(['-c', join(tree.dir, 'task.yml'), '-o', `out=${tree.dir}/out`]);
      assert.equal(r.code, 2, r.stderr);
      assert.match(
        r.stderr,
        /^berth task: output `out`: the task left out\/secret \(Permission denied\) unreadable to berth's outputs container: make it readable \(chmod a\+r\) or remove it before the task ends$/m,
      );
      assert.doesNotMatch(r.stderr, /tries/, 'a file tar may not open is not read again and again');
      assert.match(r.stderr, /^errored$/m);
      assert.equal(existsSync(join(tree.dir, 'out')), false, 'no -o folder is written');
      assert.deepEqual(await t.leftovers(), []);
    } finally {
      tree.remove();
    }
  });

  it("an output folder the task replaced with a link is not followed (Concourse's outputs are volumes), nor passed to the next step: exit 2, nothing written", async () => {
    const tree = tempTree({ 'task.yml': REPLACED });
    try {
      const cases: Array<[string, RegExp]> = [
        [
          'out',
          /^berth task: output `out`: the task replaced its folder out with a link \(out leads to \/etc\); berth does not follow it out of the task's working folder \(a Concourse output is a volume, which a task cannot replace\): write the output's files into out$/m,
        ],
        ['deep', /^berth task: output `deep`: the task replaced its folder a\/out with a link \(a\/out leads to \/tmp\/build\/[0-9a-f]{8}\/b\/out\)/m],
        ['gone', /^berth task: output `gone`: the task removed its folder gone \(.*\): write the output's files into gone$/m],
      ];
      for (const [name, says] of cases) {
        const r = await t.run(['-c', join(tree.dir, 'task.yml'), '-o', `${name}=${tree.dir}/${name}`]);
        assert.equal(r.code, 2, r.stderr);
        assert.match(r.stderr, says);
        assert.equal(existsSync(join(tree.dir, name)), false, `no -o folder for ${name}: not the helper container's /etc`);
      }
      // plans read an -o artifact whole (through berth): the same refusal
      writeFileSync(join(tree.dir, 'plan.yml'), `plan:\n  - task: make\n    file: task.yml\n`);
      const plan = await runCommand(
        process.execPath,
        [berthCli, 'task', 'plan', 'run', join(tree.dir, 'plan.yml'), '--image', BUSYBOX, '--artifacts', 'through-berth', '-o', `out=${tree.dir}/out`],
        { env: t.env(), timeoutMs: 120_000 },
      );
      assert.equal(plan.code, 2, plan.stderr);
      assert.match(plan.stderr, /output `out`: the task replaced its folder out with a link \(out leads to \/etc\)/);
      assert.equal(existsSync(join(tree.dir, 'out')), false);
      // between steps, pod to pod (direct, the default) as through berth: the link is refused at the step that made it
      writeFileSync(join(tree.dir, 'linked-plan.yml'), REPLACED_PLAN);
      for (const mode of ['direct', 'through-berth']) {
        const passed = await runCommand(
          process.execPath,
          [berthCli, 'task', 'plan', 'run', join(tree.dir, 'linked-plan.yml'), '--image', BUSYBOX, '--artifacts', mode],
          { env: t.env(), timeoutMs: 120_000 },
        );
        assert.equal(passed.code, 2, `${mode}: ${passed.stderr}`);
        assert.match(
          passed.stderr,
          /^berth task: output `out`: the task replaced its folder out with a link \(out leads to \/etc\); berth does not follow it out of the task's working folder/m,
          mode,
        );
        assert.doesNotMatch(passed.stdout, /the next step ran/, `${mode}: the next step never starts`);
      }
      assert.deepEqual(await t.leftovers(), []);
    } finally {
      tree.remove();
    }
  });

  it('an -o that names a file, or a file on its way, and an input given twice are refused before anything is created', async () => {
    const tree = tempTree({ 'task.yml': LINKED, 'plan.yml': LINKED_PLAN, 'a-file': 'keep me\n', 'in/x': 'x', 'other/y': 'y' });
    try {
      for (const dir of ['a-file', 'a-file/below']) {
        const r = await t.run(['-c', join(tree.dir, 'task.yml'), '-o', `out=${join(tree.dir, dir)}`]);
        assert.equal(r.code, 2, r.stderr);
        assert.match(r.stderr, new RegExp(`-o out=\\S+: ${join(tree.dir, 'a-file')} is a file, not a folder`));
        assert.doesNotMatch(r.stderr, /^initializing$/m, 'refused before any pod');
      }
      const plan = await runCommand(
        process.execPath,
        [berthCli, 'task', 'plan', 'run', join(tree.dir, 'plan.yml'), '--image', BUSYBOX, '-o', `made=${tree.dir}/a-file`],
        { env: t.env(), timeoutMs: 60_000 },
      );
      assert.equal(plan.code, 2, plan.stderr);
      assert.match(plan.stderr, /-o made=\S+: \S+ is a file, not a folder/);
      assert.equal(plan.stdout, '', 'no step ran');
      writeFileSync(join(tree.dir, 'inputs.yml'), 'platform: linux\ninputs: [{ name: in }]\nrun: { path: ls, args: [in] }\n');
      const twice = await t.run(['-c', join(tree.dir, 'inputs.yml'), '-i', `in=${tree.dir}/in`, '-i', `in=${tree.dir}/other`]);
      assert.equal(twice.code, 2, twice.stderr);
      assert.match(twice.stderr, /input `in` is given twice \(-i in=\S+\/in, -i in=\S+\/other\): give each input one folder/);
      assert.equal(readFileSync(join(tree.dir, 'a-file'), 'utf8'), 'keep me\n');
      assert.deepEqual(await t.leftovers(), []);
    } finally {
      tree.remove();
    }
  });

  it('plan -o of an artifact given with -i (nothing replaced it): the folder as the steps saw it, not nothing', async () => {
    const plan = 'plan:\n  - task: look\n    config:\n      platform: linux\n      inputs: [{ name: repo }]\n      run: { path: ls, args: [repo] }\n';
    const tree = tempTree({ 'plan.yml': plan, 'repo/run.sh': ['#!/bin/sh\n', 0o755], 'repo/sub/note': 'n\n' });
    try {
      const r = await runCommand(
        process.execPath,
        [berthCli, 'task', 'plan', 'run', join(tree.dir, 'plan.yml'), '--image', BUSYBOX, '-i', `repo=${tree.dir}/repo`, '-o', `repo=${tree.dir}/out/repo`],
        { env: t.env(), timeoutMs: 120_000 },
      );
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout, 'run.sh\nsub\n');
      assert.equal(readFileSync(join(tree.dir, 'out/repo/sub/note'), 'utf8'), 'n\n');
      assert.equal(statSync(join(tree.dir, 'out/repo/run.sh')).mode & 0o777, 0o755);
    } finally {
      tree.remove();
    }
  });

  it('plan: Ctrl-C while -o reads an artifact at the end: exit 3, no -o folder, nothing left', async () => {
    const plan = `plan:\n  - task: make\n    config:\n${BIG_OUTPUT.replace(/^/gm, '      ').trimEnd()}\n`;
    const tree = tempTree({ 'plan.yml': plan });
    try {
      const child = spawn(process.execPath, [berthCli, 'task', 'plan', 'run', join(tree.dir, 'plan.yml'), '--image', BUSYBOX, '-o', `out=${tree.dir}/out`], {
        env: t.env(),
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stderr = '';
      child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
      const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
      // the step's own `succeeded`: the plan reads its -o folders next
      await eventually('the step succeeded', () => /^succeeded$/m.test(stderr), { timeoutMs: 90_000 });
      child.kill('SIGINT');
      assert.equal(await exited, 3, stderr);
      assert.match(stderr, /^interrupted$/m);
      assert.equal(stderr.match(/^succeeded$/gm)?.length, 1, `only the step succeeded, not the plan: ${stderr}`);
      assert.equal(existsSync(join(tree.dir, 'out')), false);
      assert.deepEqual(await t.leftovers(), []);
    } finally {
      tree.remove();
    }
  });

  it('a 200 MiB output streams into an -o folder already there: whole, beside what the output does not replace, nothing partial left', async () => {
    const task =
      "platform: linux\noutputs: [{ name: out }]\nrun: { path: sh, args: [-ec, 'head -c 209715200 /dev/urandom > out/big && echo new > out/same && sha256sum out/big'] }\n";
    const tree = tempTree({ 'task.yml': task, 'dest/old': 'kept\n', 'dest/same': 'replaced\n' });
    try {
      const r = await t.run(['-c', join(tree.dir, 'task.yml'), '-o', `out=${tree.dir}/dest`], { timeoutMs: 240_000 });
      assert.equal(r.code, 0, r.stderr);
      const made = /^([0-9a-f]{64}) {2}out\/big$/m.exec(r.stdout)?.[1];
      assert.ok(made, r.stdout);
      const h = createHash('sha256');
      await new Promise<void>((resolve, reject) =>
        createReadStream(join(tree.dir, 'dest/big'))
          .on('data', (c) => h.update(c))
          .on('end', () => resolve())
          .on('error', reject),
      );
      assert.equal(h.digest('hex'), made);
      assert.equal(readFileSync(join(tree.dir, 'dest/old'), 'utf8'), 'kept\n');
      assert.equal(readFileSync(join(tree.dir, 'dest/same'), 'utf8'), 'new\n');
      assert.deepEqual(readdirSync(tree.dir).sort(), ['dest', 'task.yml'], 'no staging folder left beside it');
    } finally {
      tree.remove();
    }
  });

  it('-o out=. fills the current folder beside what it holds; -o through a link fills the folder it names; a link to nothing is refused', async () => {
    const tree = tempTree({ 'here/task.yml': LINKED, 'here/mine': 'mine\n', 'real/.keep': '' });
    try {
      const dot = await t.run(['-c', 'task.yml', '-o', 'out=.'], { cwd: join(tree.dir, 'here') });
      assert.equal(dot.code, 0, dot.stderr);
      assert.deepEqual(
        readdirSync(join(tree.dir, 'here')).sort(),
        ['a', 'b', 'd', 'mine', 's', 'task.yml'],
        'the output beside what was there, no staging folder',
      );
      symlinkSync('real', join(tree.dir, 'link'));
      const linked = await t.run(['-c', join(tree.dir, 'here/task.yml'), '-o', `out=${tree.dir}/link`]);
      assert.equal(linked.code, 0, linked.stderr);
      assert.equal(readFileSync(join(tree.dir, 'real/d/e/c'), 'utf8'), 'one\n');
      symlinkSync('nowhere', join(tree.dir, 'dangling'));
      const dangling = await t.run(['-c', join(tree.dir, 'here/task.yml'), '-o', `out=${tree.dir}/dangling`]);
      assert.equal(dangling.code, 2);
      assert.match(dangling.stderr, /-o out=\S+: \S+\/dangling is a link to nothing/);
      assert.doesNotMatch(dangling.stderr, /^initializing$/m);
    } finally {
      tree.remove();
    }
  });
});
