// A 200 MiB artifact from one plan step to the next, byte-identical, in both artifact modes (direct, pod to
// pod; through berth), through the real CLI as the user bound to exactly deploy/rbac/task-role.yaml.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { berthCli, BUSYBOX } from '../harness/cluster.js';
import { runCommand, setUpTask, tempTree, type TaskEnv } from './task-env.js';

const MIB = 200;

/** make writes MIB MiB of random bytes (and one small file beside them) and prints their sha256; use prints what it received. */
export const ARTIFACT_PLAN = `plan:
  - task: make
    config:
      platform: linux
      outputs: [{ name: blob }]
      run:
        path: sh
        args: [-c, 'mkdir blob/sub && echo small > blob/sub/note && head -c ${MIB * 1024 * 1024} /dev/urandom > blob/data && echo "made $(sha256sum blob/data | cut -d" " -f1)"']
  - task: use
    input_mapping: { in: blob }
    config:
      platform: linux
      inputs: [{ name: in }]
      run:
        path: sh
        args: [-c, 'echo "used $(sha256sum in/data | cut -d" " -f1) $(wc -c < in/data) $(cat in/sub/note)"']
`;

function sha256File(path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const h = createHash('sha256');
    createReadStream(path)
      .on('data', (c) => h.update(c))
      .on('end', () => resolve(h.digest('hex')))
      .on('error', reject);
  });
}

describe(`a ${MIB} MiB artifact from step to step`, () => {
  let t: TaskEnv;
  const plan = tempTree({ 'plan.yml': ARTIFACT_PLAN });
  const run = (args: string[]) =>
    runCommand(process.execPath, [berthCli, 'task', 'plan', 'run', join(plan.dir, 'plan.yml'), '--image', BUSYBOX, ...args], {
      env: t.env(),
      timeoutMs: 300_000,
    });
  before(async () => {
    t = await setUpTask('task-artifacts');
  });
  after(async () => {
    plan.remove();
    await t?.close();
  });

  for (const mode of ['direct', 'through-berth']) {
    // 200 MiB twice through a loaded machine can outlast the harness's default of 120 s per test
    it(
      `--artifacts ${mode}: the consumer's sha256 is the producer's${mode === 'direct' ? '; -o downloads the same bytes' : ''}`,
      { timeout: 300_000 },
      async () => {
        const out = tempTree({});
        try {
          const r = await run(['--artifacts', mode, ...(mode === 'direct' ? ['-o', `blob=${out.dir}/blob`] : [])]);
          assert.equal(r.code, 0, r.stderr);
          const made = /^made ([0-9a-f]{64})$/m.exec(r.stdout)?.[1];
          assert.ok(made, r.stdout);
          assert.match(r.stdout, new RegExp(`^used ${made} ${MIB * 1024 * 1024} small$`, 'm'));
          if (mode === 'direct') assert.equal(await sha256File(join(out.dir, 'blob/data')), made);
          assert.deepEqual(await t.leftovers(), [], 'the kept producer pod is deleted when the plan ends');
        } finally {
          out.remove();
        }
      },
    );
  }

  it('an unknown --artifacts mode is refused before anything runs', async () => {
    const r = await run(['--artifacts', 'carrier-pigeon']);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /--artifacts carrier-pigeon: expected one of direct, through-berth/);
    assert.equal(r.stdout, '');
  });
});
