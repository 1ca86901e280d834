// berth serve under the dev cluster's faults: `docker run --rm` and `docker exec` either give exactly the
// fault-free run's exit code and output, or fail saying so (docker's 125/126/127); `docker cp` either way
// copies every byte or exits 1 — never a wrong success, never a hang — and nothing is left in the
// namespace once everything is removed and `berth gc` ran.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { berthCli, BUSYBOX, freshNamespace, kubeconfigPath, kubectlOk, runCommand } from '../harness/cluster.js';
import { dropNamespace, startBerth, type DockerEngine } from '../serve/serve-env.js';
import { FAULT_CASES, judge, NO_FAULTS, setFaults, Tally, underFaults, type RunOutcome } from './fault-kit.js';

const RUNS_PER_CASE = 5;
const RUN_LIMIT_MS = 90_000;
/** docker's own codes when the daemon failed the call: run 125, exec 126 (berth's exec failure) and 127. */
const DOCKER_FAILURE_CODES = [125, 126, 127];
const RUN = ['run', '--rm', BUSYBOX, 'sh', '-c', 'echo out-line; echo err-line >&2; exit 3'];
const EXEC = ['exec', 'target', 'sh', '-c', 'echo exec-out; echo exec-err >&2; exit 4'];
/** The docker CLI's exit code for a failed `docker cp`. */
const CP_FAILURE_CODES = [1];
/** Big enough for many stream frames, so a cut copy shows as missing bytes. */
const CP_BYTES = 512 * 1024;

/** One docker call with a time limit; stdout and stderr together are the output compared. */
async function outcome(engine: DockerEngine, args: string[]): Promise<RunOutcome & { stderr: string }> {
  try {
    const r = await engine.docker(args, { timeoutMs: RUN_LIMIT_MS });
    return { code: r.code, stdout: `${r.stdout}\u0000${r.stderr}`, stderr: r.stderr };
  } catch (err) {
    return { code: null, stdout: '', stderr: (err as Error).message, timedOut: true };
  }
}

/** berth's objects of the instance in the namespace, leases included. */
async function leftovers(namespace: string, instance: string): Promise<string[]> {
  const out = await kubectlOk(['-n', namespace, 'get', 'pods,services,persistentvolumeclaims,leases', '-l', `berth.dev/owner=${instance}`, '-o', 'name']);
  return out.split('\n').filter(Boolean);
}

test(
  'docker run --rm and docker exec through berth serve under every fault case: exact or failed, never wrong, never hung',
  { timeout: 1_500_000 },
  async () => {
    const namespace = await freshNamespace('serve-faults');
    const instance = `faults${process.pid}`;
    const engine = await startBerth(namespace, instance);
    const tally = new Tally('berth serve under faults');
    const work = mkdtempSync(join(tmpdir(), 'berth-serve-faults-'));
    const fixture = join(work, 'fixture.bin');
    const fixtureBytes = randomBytes(CP_BYTES);
    writeFileSync(fixture, fixtureBytes);
    const fixtureSum = createHash('sha256').update(fixtureBytes).digest('hex');
    try {
      await setFaults(NO_FAULTS);
      await engine.dockerOk(['pull', BUSYBOX]);
      await engine.dockerOk(['run', '-d', '--name', 'target', BUSYBOX, 'sleep', '3600']);
      const expectedRun = await outcome(engine, RUN);
      const expectedExec = await outcome(engine, EXEC);
      assert.equal(expectedRun.code, 3, expectedRun.stderr);
      assert.equal(expectedRun.stdout, 'out-line\n\u0000err-line\n');
      assert.equal(expectedExec.code, 4, expectedExec.stderr);
      assert.equal(expectedExec.stdout, 'exec-out\n\u0000exec-err\n');
      await engine.dockerOk(['cp', fixture, 'target:/tmp/fixture.bin']);

      const copiesIn: Array<{ fault: string; path: string }> = [];
      for (const [k, { name, faults }] of FAULT_CASES.entries()) {
        await underFaults(faults, async () => {
          for (let i = 0; i < RUNS_PER_CASE; i++) {
            const run = await outcome(engine, RUN);
            tally.add('docker run --rm', name, judge(expectedRun, run, DOCKER_FAILURE_CODES), `exit ${run.code}: ${JSON.stringify(run.stdout)}`);
            const exec = await outcome(engine, EXEC);
            tally.add('docker exec', name, judge(expectedExec, exec, DOCKER_FAILURE_CODES), `exit ${exec.code}: ${JSON.stringify(exec.stdout)}`);
            const out = join(work, `out-${k}-${i}.bin`);
            const get = await outcome(engine, ['cp', 'target:/tmp/fixture.bin', out]);
            const got = get.code === 0 ? readFileSync(out) : Buffer.alloc(0);
            tally.add(
              'docker cp out of a container',
              name,
              judge({ code: 0, stdout: fixtureBytes }, { ...get, stdout: got }, CP_FAILURE_CODES),
              `exit ${get.code}: ${got.length} bytes; ${get.stderr}`,
            );
            const into = `/tmp/in-${k}-${i}.bin`;
            const put = await outcome(engine, ['cp', fixture, `target:${into}`]);
            if (put.code === 0) copiesIn.push({ fault: name, path: into });
            else
              tally.add(
                'docker cp into a container',
                name,
                judge({ code: 0, stdout: '' }, { ...put, stdout: '' }, CP_FAILURE_CODES),
                `exit ${put.code}: ${put.stderr}`,
              );
          }
          // Removal under the same faults: a failed delete is reported, and removing again retries it.
          for (const id of (await engine.dockerOk(['ps', '-a', '-q'])).split('\n').filter(Boolean)) {
            if (id && !(await engine.docker(['inspect', '-f', '{{.Name}}', id])).stdout.includes('/target')) {
              const rm = await engine.docker(['rm', '-f', id], { timeoutMs: RUN_LIMIT_MS });
              if (rm.code !== 0) await engine.dockerOk(['rm', '-f', id], { timeoutMs: RUN_LIMIT_MS });
            }
          }
        });
      }
      // Each copy in that said it succeeded is read back without faults: every byte arrived.
      for (const { fault, path } of copiesIn) {
        const sum = (await engine.docker(['exec', 'target', 'sha256sum', path])).stdout.split(' ')[0];
        tally.add('docker cp into a container', fault, sum === fixtureSum ? 'exact' : 'wrong', `${path}: sha256 ${sum}`);
      }
      tally.print();
      assert.deepEqual(tally.bad(), []);

      await engine.dockerOk(['rm', '-f', 'target']);
      assert.equal((await engine.dockerOk(['ps', '-a', '-q'])).trim(), '', 'every container removed');
      const gc = await runCommand(process.execPath, [berthCli, 'gc', '--kubeconfig', kubeconfigPath(), '-n', namespace]);
      assert.equal(gc.code, 0, gc.stderr);
      const left = await leftovers(namespace, instance);
      console.log(`objects left in the namespace after rm -f and berth gc: ${left.length}`);
      assert.deepEqual(left, []);
    } finally {
      await setFaults(NO_FAULTS).catch(() => undefined);
      rmSync(work, { recursive: true, force: true });
      await engine.stop();
      const left = await leftovers(namespace, instance);
      await dropNamespace(namespace);
      assert.deepEqual(left, [], 'berth serve left objects behind after SIGTERM');
    }
  },
);
