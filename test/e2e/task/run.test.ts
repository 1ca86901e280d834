// berth task run through the real CLI, as the user bound to exactly deploy/rbac/task-role.yaml: real task
// files from concourse/examples (image swapped with --image), and behaviour as fly execute would show it.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmodSync, copyFileSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { berthCli, BUSYBOX, contextFor, kubeconfigPath, kubectlOk } from '../harness/cluster.js';
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

  it('binary-test: the executable lives in the input; stdout and stderr stay apart; a folder named as the input is it', async () => {
    const tree = tempTree({ 'binary/ascii-banner': ['#!/bin/sh\necho "banner: $*"\n', 0o755] });
    try {
      const r = await t.run(['-c', fixture('binary-test.yml'), '-i', `binary=${tree.dir}/binary`]);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout, 'banner: -list\nbanner: concourse\nbanner: plane\nbanner: pilot\n');
      assert.match(r.stderr, /^\+ \.\/binary\/ascii-banner concourse$/m, 'sh -x traces go to stderr');
      // fly execute: run from a folder named `binary` and no -i, that folder is the input `binary`.
      const here = await t.run(['-c', fixture('binary-test.yml')], { cwd: join(tree.dir, 'binary') });
      assert.equal(here.code, 0, here.stderr);
      assert.equal(here.stdout, r.stdout);
      // From a folder named otherwise, nothing is taken, as fly does, even for a task of one input.
      const elsewhere = await t.run(['-c', fixture('binary-test.yml')], { cwd: tree.dir });
      assert.equal(elsewhere.code, 2, elsewhere.stderr);
      assert.match(elsewhere.stderr, /missing required input `binary`: pass -i binary=DIR/);
    } finally {
      tree.remove();
    }
  });

  it('date-tag: the task writes a date tag into its output (a folder named as its input is the input)', async () => {
    const tree = tempTree({ 'repo/README': 'the repo\n' });
    const out = tempTree({});
    try {
      const r = await t.run(['-c', fixture('date-tag.yml'), '-o', `image=${out.dir}/image`], { cwd: join(tree.dir, 'repo') });
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout, 'building the image...\nimage built!\n');
      const tag = readFileSync(join(out.dir, 'image/version'), 'utf8');
      assert.match(tag, /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])\n$/, `a YYYY-MM-DD tag: ${JSON.stringify(tag)}`);
      const [year] = tag.split('-');
      assert.ok(Math.abs(Number(year) - new Date().getUTCFullYear()) <= 1, `the task's date is today's: ${tag}`);
    } finally {
      tree.remove();
      out.remove();
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

  it("run.dir, a relative run.path, an output sharing an input's path, params converted", async () => {
    const script =
      '#!/bin/sh\nset -e\necho "pwd=$(pwd)"\necho "NUMBER=$NUMBER FLAG=$FLAG NOTHING=[$NOTHING] MAP=$MAP"\necho built > ../out/built/artifact\necho changed >> input.txt\n';
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

  it('run.user: a task as a non-root uid gets its inputs (its own, even those of mode 0600), a run.dir and its params, and writes its outputs', async () => {
    const task =
      'platform: linux\ninputs: [{ name: in }]\noutputs: [{ name: out }]\nparams: { P: p }\nrun:\n  user: "1000"\n  dir: in/sub\n  path: sh\n  args: [-ec, \'id -u; cat ../private; echo "$P" > ../../out/f; mkdir ../../out/d && echo g > ../../out/d/g\']\n';
    const tree = tempTree({ 'task.yml': task, 'in/private': ['only mine\n', 0o600], 'in/sub/.keep': '' });
    try {
      const r = await t.run(['-c', join(tree.dir, 'task.yml'), '-i', `in=${tree.dir}/in`, '-o', `out=${tree.dir}/out`]);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout, '1000\nonly mine\n');
      assert.equal(readFileSync(join(tree.dir, 'out/f'), 'utf8'), 'p\n');
      assert.equal(readFileSync(join(tree.dir, 'out/d/g'), 'utf8'), 'g\n');
    } finally {
      tree.remove();
    }
  });

  it("a working directory that cannot be laid out (an output at an input's file) errs at once, in the helper's words, without another pod", async () => {
    const tree = tempTree({
      'task.yml': 'platform: linux\ninputs: [{ name: a, path: x }]\noutputs: [{ name: o, path: x/f }]\nrun: { path: "true" }\n',
      'a/f': 'a file\n',
    });
    try {
      const r = await t.run(['-c', join(tree.dir, 'task.yml'), '-i', `a=${tree.dir}/a`]);
      assert.equal(r.code, 2, r.stderr);
      assert.match(
        r.stderr,
        /^berth task: the inputs arrived but the working directory could not be laid out: mkdir: can't create directory '\/tmp\/build\/[0-9a-f]{8}\/x\/f': File exists \(check the paths/m,
      );
      assert.doesNotMatch(r.stderr, /starting a new pod/, 'another pod would fail the same way');
      assert.deepEqual(await t.leftovers(), []);
    } finally {
      tree.remove();
    }
  });

  it('a date in params and run.args is the text written, as Concourse reads it (not refused, not 2024-01-01T00:00:00.000Z)', async () => {
    const tree = tempTree({
      'task.yml': 'platform: linux\nparams: { RELEASED: 2024-01-01 }\nrun: { path: sh, args: [-c, \'echo "$0 $RELEASED"\', 2025-12-31] }\n',
    });
    try {
      const r = await t.run(['-c', join(tree.dir, 'task.yml')]);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout, '2025-12-31 2024-01-01\n');
    } finally {
      tree.remove();
    }
  });

  it('an input file berth may not read ends the run at once, naming it (exit 2), and nothing is left', async () => {
    const tree = tempTree({
      'task.yml': 'platform: linux\ninputs: [{ name: in }]\nrun: { path: ls, args: [in] }\n',
      'in/ok': 'ok\n',
      'in/locked': ['secret\n', 0o000],
    });
    try {
      const env = t.env();
      let [cmd, args] = [process.execPath, [berthCli, 'task', 'run', '-c', join(tree.dir, 'task.yml'), '--image', BUSYBOX, '-i', `in=${tree.dir}/in`]];
      if (process.getuid?.() === 0) {
        // root reads every file: berth runs as nobody then, with a copy of the kubeconfig it may read
        copyFileSync(String(env.KUBECONFIG), join(tree.dir, 'kubeconfig'));
        chmodSync(join(tree.dir, 'kubeconfig'), 0o644);
        Object.assign(env, { KUBECONFIG: join(tree.dir, 'kubeconfig'), HOME: tree.dir });
        [cmd, args] = ['setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', cmd, ...args]];
      }
      const r = await runCommand(cmd, args, { env, timeoutMs: 60_000 });
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, new RegExp(`^berth task: input \`in\`: cannot read ${join(tree.dir, 'in/locked')} \\(EACCES\\): `, 'm'));
      assert.doesNotMatch(r.stderr, /starting a new pod|Unhandled/);
      assert.equal(r.stdout, '', 'the task did not run');
      assert.deepEqual(await t.leftovers(), []);
    } finally {
      tree.remove();
    }
  });

  it("container_limits of 0 are no limits, as on a Concourse worker; others are the pod's request and limit", async () => {
    const tree = tempTree({
      'zero.yml': 'platform: linux\ncontainer_limits: { cpu: 0, memory: 0 }\nrun: { path: sh, args: [-c, "echo started; sleep 300"] }\n',
      'some.yml': 'platform: linux\ncontainer_limits: { cpu: 512, memory: 64MB }\nrun: { path: sh, args: [-c, "echo started; sleep 300"] }\n',
    });
    try {
      for (const [file, resources] of [
        ['zero.yml', undefined],
        ['some.yml', { limits: { memory: String(64 * 1024 * 1024) }, requests: { cpu: '500m', memory: String(64 * 1024 * 1024) } }],
      ] as const) {
        const child = spawn(process.execPath, [berthCli, 'task', 'run', '-c', join(tree.dir, file), '--image', BUSYBOX], {
          env: t.env(),
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let stdout = '';
        child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
        const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
        await eventually('the task prints started', () => stdout.includes('started\n'), { timeoutMs: 60_000 });
        const pods = JSON.parse(await kubectlOk(['-n', t.namespace, 'get', 'pods', '-l', 'app.kubernetes.io/managed-by=berth', '-o', 'json'])) as {
          items: Array<{ spec: { containers: Array<{ name: string; resources?: object }> } }>;
        };
        const task = pods.items[0]?.spec.containers.find((c) => c.name === 'task');
        child.kill('SIGTERM');
        assert.equal(await exited, 3);
        assert.deepEqual(task?.resources && Object.keys(task.resources).length ? task.resources : undefined, resources, file);
      }
    } finally {
      tree.remove();
    }
  });

  it('in a git work tree only what git would take is uploaded, unless --include-ignored', async () => {
    const tree = tempTree({
      'binary/ascii-banner': ['#!/bin/sh\nls /tmp/build/*/binary | tr "\\n" " "; echo\n', 0o755],
      'binary/.gitignore': 'ignored.txt\n',
      'binary/ignored.txt': 'x',
      'binary/untracked.txt': 'y',
    });
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

  it('a missing or unknown subcommand is a refused command line: exit 2, help on stderr; --help exits 0', async () => {
    const berthTask = (...args: string[]) => runCommand(process.execPath, [berthCli, 'task', ...args], { env: t.env(), timeoutMs: 30_000 });
    for (const args of [[], ['bogus'], ['plan'], ['target'], ['caches'], ['caches', 'ls', '--bogus']]) {
      const r = await berthTask(...args);
      assert.equal(r.code, 2, `berth task ${args.join(' ')}: ${r.stderr}`);
      assert.equal(r.stdout, '', 'nothing on stdout: a script reading it gets no help text for output');
      assert.match(r.stderr, /Usage: berth task|error: unknown/);
    }
    const help = await berthTask('--help');
    assert.equal(help.code, 0, help.stderr);
    assert.match(help.stdout, /^Usage: berth task /);
    assert.deepEqual(await t.leftovers(), []);
  });

  it("a cluster berth cannot reach is named with berth task's own flags, not the docker shim's BERTH_CONTEXT (exit 2), and no object is claimed left", async () => {
    const tree = tempTree({});
    try {
      // the harness cluster's kubeconfig, its server moved to a port nothing listens on
      const kubeconfig = join(tree.dir, 'kubeconfig');
      writeFileSync(kubeconfig, readFileSync(kubeconfigPath(), 'utf8').replace(/server: https:\/\/127\.0\.0\.1:\d+/g, 'server: https://127.0.0.1:1'));
      const r = await t.run(['-c', fixture('print-param.yml'), '--kubeconfig', kubeconfig]);
      assert.equal(r.code, 2, r.stderr);
      assert.match(
        r.stderr,
        /^berth task: cannot reach the cluster at https:\/\/127\.0\.0\.1:1: .*\(is it running\? check KUBECONFIG and the context: --kubeconfig, --context or --target\)$/m,
      );
      assert.doesNotMatch(r.stderr, /BERTH_CONTEXT|docker shim/);
      // Nothing was created, so nothing is said to be left behind, and nothing is started.
      assert.doesNotMatch(r.stderr, /could not delete|berth gc|\bpod\b|secret/i);
      assert.deepEqual(r.stderr.split('\n').filter(Boolean).slice(1), ['errored'], 'the error and the end of the run, no "initializing"');
    } finally {
      tree.remove();
    }
  });

  it('refuses -p, bad configs (field and line), bad cache paths, before anything is created', async () => {
    const p = await t.run(['-c', fixture('print-param.yml'), '-p']);
    assert.equal(p.code, 2);
    assert.match(p.stderr, /-p \(privileged\) is refused/);
    const usage = await t.run(['-c', fixture('print-param.yml'), '-i', 'no-equals-sign']);
    assert.equal(usage.code, 2, "a refused command line is berth's failure");
    assert.match(usage.stderr, /-i no-equals-sign: expected NAME=DIR/);
    const bad = await t.run(['-c', fixture('bad-key.yml')]);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /unknown field ouputs \(line 3\)/);
    const docs = tempTree({ 'two.yml': 'platform: linux\nrun: { path: "true" }\n---\nplatform: linux\n' });
    try {
      const two = await t.run(['-c', join(docs.dir, 'two.yml')]);
      assert.equal(two.code, 2);
      assert.match(two.stderr, /the file holds more than one YAML document \(---\) at line 3, column 1: a Concourse file is one document$/m);
      assert.doesNotMatch(two.stderr, /parseAllDocuments/, "the parser's own API is not the user's business");
    } finally {
      docs.remove();
    }
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
    // berth task's own words: its flag and its Role, never the docker shim's BERTH_NAMESPACE or shim-role.yaml
    // (as admin: the task user is forbidden everything where its RoleBinding is not, and hears so)
    const missing = await t.run(['-c', fixture('print-param.yml'), '-n', `${t.namespace}-missing`], { extraEnv: { BERTH_CONTEXT: contextFor('admin') } });
    assert.equal(missing.code, 2);
    assert.match(
      missing.stderr,
      new RegExp(`namespace ${t.namespace}-missing does not exist \\(create it, or pick another with -n \\(--namespace\\) or --target\\)`),
    );
    assert.doesNotMatch(missing.stderr, /BERTH_NAMESPACE|shim-role/);
    const own = await t.run(['-c', fixture('exit-code.yml')], { taskImage: true, extraEnv: { CODE: '0' } });
    assert.equal(own.code, 0, `a registry-image image_resource names the pod's image: ${own.stderr}`);
    assert.deepEqual(await t.leftovers(), []);
  });

  /** The sleeper fixture running, once it printed `started`. */
  const startSleeper = async () => {
    const child = spawn(process.execPath, [berthCli, 'task', 'run', '-c', fixture('sleeper.yml'), '--image', 'localhost/berth/busybox:1'], {
      env: t.env(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const out = { stdout: '', stderr: '' };
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out.stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (out.stderr += d));
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    await eventually('the task prints started', () => out.stdout.includes('started\n'), { timeoutMs: 60_000 });
    return { child, out, exited };
  };

  it('SIGTERM mid-task: exit 3, the pod and its Secret are gone; params are not in the pod spec', async () => {
    const { child, out, exited } = await startSleeper();
    const spec = await kubectlOk(['-n', t.namespace, 'get', 'pods', '-l', 'app.kubernetes.io/managed-by=berth', '-o', 'json']);
    assert.doesNotMatch(spec, /do-not-print/, 'the param is in a Secret, not in the pod spec');
    assert.match(spec, /secretKeyRef/);
    const secret = JSON.parse(await kubectlOk(['-n', t.namespace, 'get', 'secrets', '-l', 'app.kubernetes.io/managed-by=berth', '-o', 'json'])) as {
      items: Array<{ metadata: { ownerReferences?: Array<{ kind: string }> } }>;
    };
    assert.equal(secret.items.length, 1);
    assert.equal(secret.items[0].metadata.ownerReferences?.[0]?.kind, 'Pod');
    child.kill('SIGTERM');
    assert.equal(await exited, 3, out.stderr);
    assert.match(out.stderr, /^interrupted$/m);
    assert.deepEqual(await t.leftovers(), [], 'nothing of the task is left in the namespace');
  });

  it('a pod deleted under a running task (kubectl delete, target retire) is no success, even when the task exits 0 on SIGTERM', async () => {
    const tree = tempTree({
      'task.yml': 'platform: linux\nrun:\n  path: sh\n  args: [-c, \'trap "echo stopped; exit 0" TERM; echo started; sleep 300 & wait\']\n',
    });
    try {
      const child = spawn(process.execPath, [berthCli, 'task', 'run', '-c', join(tree.dir, 'task.yml'), '--image', 'localhost/berth/busybox:1'], {
        env: t.env(),
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const out = { stdout: '', stderr: '' };
      child.stdout.setEncoding('utf8').on('data', (d: string) => (out.stdout += d));
      child.stderr.setEncoding('utf8').on('data', (d: string) => (out.stderr += d));
      const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
      await eventually('the task prints started', () => out.stdout.includes('started\n'), { timeoutMs: 60_000 });
      await kubectlOk(['-n', t.namespace, 'delete', 'pods', '-l', 'app.kubernetes.io/managed-by=berth', '--wait=false']);
      assert.equal(await exited, 2, out.stderr);
      assert.match(out.stdout, /^stopped$/m, 'the task trapped SIGTERM and exited 0');
      assert.match(out.stderr, /berth task: pod task-[0-9a-f]{8} was deleted while the task ran .*: its end is not its own, whatever its exit code/);
      assert.match(out.stderr, /^errored$/m);
      assert.doesNotMatch(out.stderr, /^succeeded$/m);
    } finally {
      tree.remove();
    }
  });

  it('a task past its deadline (BERTH_TTL) failed without an exit code of its own: 1, saying so', async () => {
    const r = await t.run(['-c', fixture('sleeper.yml')], { extraEnv: { BERTH_TTL: '8s' } });
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /^berth: pod task-[0-9a-f]{8} hit its deadline \(activeDeadlineSeconds 8: raise BERTH_TTL\) and the task was stopped$/m);
    assert.match(r.stderr, /^failed$/m);
  });

  it('Ctrl-C (SIGINT) mid-task: exit 3, nothing left', async () => {
    const { child, out, exited } = await startSleeper();
    child.kill('SIGINT');
    assert.equal(await exited, 3, out.stderr);
    assert.match(out.stderr, /^interrupted$/m);
    assert.match(out.stderr, /^aborting\.\.\.$/m, "fly's words");
    assert.doesNotMatch(out.stderr, /exiting immediately/, 'one Ctrl-C waits for the cleanup');
    assert.deepEqual(await t.leftovers(), [], 'nothing of the task is left in the namespace');
  });

  it("one Ctrl-C delivered twice (the terminal's and `npm run`'s forwarded copy) is one interrupt: the cleanup is done", async () => {
    const { child, out, exited } = await startSleeper();
    child.kill('SIGINT');
    // the scenario itself: npm forwards its own SIGINT to the child a moment after the terminal's
    await new Promise((r) => setTimeout(r, 50));
    child.kill('SIGINT');
    assert.equal(await exited, 3, out.stderr);
    assert.doesNotMatch(out.stderr, /exiting immediately/);
    assert.match(out.stderr, /^interrupted$/m);
    assert.deepEqual(await t.leftovers(), [], 'nothing of the task is left in the namespace');
  });

  it("a second signal exits at once, naming what it may leave (deletes under way); what is still there is berth's and expiring; berth gc removes it", async () => {
    const { child, out, exited } = await startSleeper();
    const signalled = Date.now();
    // Two signals of one kind sent before the first is handled are one to the kernel (standard signals do not
    // queue): SIGTERM then SIGINT are two, whatever the timing, as a CI runner's SIGTERM and a user's Ctrl-C.
    child.kill('SIGTERM');
    child.kill('SIGINT');
    assert.equal(await exited, 3, out.stderr);
    const tookMs = Date.now() - signalled;
    // No answer of the cluster is waited for (plan.test.ts leaves a running ensure hook's pod this way).
    assert.ok(tookMs < 5_000, `exited ${tookMs} ms after the second signal: ${out.stderr}`);
    const said =
      /^berth task: interrupted again: exiting immediately; left (.+) in namespace (\S+): each expires by its deadline \(BERTH_TTL\) and `berth gc` removes it$/m.exec(
        out.stderr,
      );
    assert.ok(said, `one line names what is left: ${out.stderr}`);
    assert.equal(said[2], t.namespace);
    const named = said[1].split(', ');
    // The first signal's deletes were on their way: named, as their answer never came. A delete answered before
    // the second signal was handled (a quick cluster) leaves nothing to name: that pod must be going, then.
    if (!named.some((n) => /^pod\/task-[0-9a-f]{8}( \(deletion asked\))?$/.test(n))) {
      const pods = JSON.parse(await kubectlOk(['-n', t.namespace, 'get', 'pods', '-l', 'app.kubernetes.io/managed-by=berth', '-o', 'json'])) as {
        items: Array<{ metadata: { name: string; deletionTimestamp?: string } }>;
      };
      for (const p of pods.items) assert.ok(p.metadata.deletionTimestamp, `pod/${p.metadata.name} is neither named (${said[1]}) nor being deleted`);
    }
    assert.ok(
      named.some((n) => n.startsWith('secret/')),
      `its params Secret is named: ${said[1]}`,
    );
    // What it named and is still there, read by name (not by berth's label, which is what is checked), is berth's and expires.
    const names = named.map((n) => n.replace(/ \(deletion asked\)$/, ''));
    const left = JSON.parse((await kubectlOk(['-n', t.namespace, 'get', ...names, '--ignore-not-found', '-o', 'json'])) || '{"items":[]}') as {
      items: Array<{
        kind: string;
        metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string>; ownerReferences?: Array<{ kind: string }> };
        spec?: { activeDeadlineSeconds?: number };
      }>;
    };
    for (const o of left.items) {
      const what = `${o.kind}/${o.metadata.name}`;
      assert.equal(o.metadata.labels?.['app.kubernetes.io/managed-by'], 'berth', `${what} carries berth's label`);
      assert.ok(o.metadata.labels?.['berth.dev/owner'], `${what} carries its owner`);
      assert.ok(Date.parse(o.metadata.annotations?.['berth.dev/expires-at'] ?? '') > Date.now(), `${what} carries an expiry`);
      if (o.kind === 'Pod') assert.ok((o.spec?.activeDeadlineSeconds ?? 0) > 0, `${what} has a deadline`);
      else assert.equal(o.metadata.ownerReferences?.[0]?.kind, 'Pod', `${what} goes with its pod`);
    }
    const gc = await runCommand(process.execPath, [berthCli, 'gc', '--all', '--kinds', 'pods', '-n', t.namespace, '--context', String(t.env().BERTH_CONTEXT)], {
      env: t.env(),
    });
    assert.equal(gc.code, 0, gc.stderr);
    await eventually('berth gc --all removed what was left (the Secret with its pod)', async () => (await t.leftovers()).length === 0, { timeoutMs: 60_000 });
  });
});
