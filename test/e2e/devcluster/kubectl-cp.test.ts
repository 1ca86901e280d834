// kubectl cp against the dev cluster, both ways, and a missing source in the pod: tar's error reaches kubectl
// (which, as against a real cluster, still exits 0 there: kubernetes/kubectl#980).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BUSYBOX, deleteNamespace, freshNamespace, kubectl, kubectlOk } from '../harness/cluster.js';

describe('kubectl cp', () => {
  let ns: string;
  let dir: string;
  before(async () => {
    ns = await freshNamespace('cp');
    dir = mkdtempSync(join(tmpdir(), 'berth-cp-'));
    await kubectlOk(['run', 'box', '-n', ns, `--image=${BUSYBOX}`, '--restart=Never', '--', 'sleep', '3600']);
    await kubectlOk(['wait', '--for=condition=Ready', 'pod/box', '-n', ns, '--timeout=60s']);
  });
  after(async () => {
    rmSync(dir, { recursive: true, force: true });
    await deleteNamespace(ns);
  });

  test('a file goes into the pod and comes back unchanged', async () => {
    writeFileSync(join(dir, 'in.txt'), 'hello from the host\n');
    await kubectlOk(['cp', join(dir, 'in.txt'), `${ns}/box:/tmp/in.txt`]);
    await kubectlOk(['cp', `${ns}/box:/tmp/in.txt`, join(dir, 'back.txt')]);
    assert.equal(readFileSync(join(dir, 'back.txt'), 'utf8'), 'hello from the host\n');
  });

  test('a missing source: tar\'s error is printed, every time', async () => {
    for (let i = 0; i < 10; i++) {
      const r = await kubectl(['cp', `${ns}/box:/nonexistent`, join(dir, 'x')]);
      // kubectl cp writes the remote stderr to its own stdout
      assert.match(r.stdout + r.stderr, /tar: \/nonexistent: No such file or directory/, `attempt ${i + 1}: ${JSON.stringify(r)}`);
    }
  });
});
