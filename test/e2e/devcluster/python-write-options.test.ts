// The Python kubernetes client's write options: a value a 1.32 server refuses (`dry_run="all"`, a lower-case
// propagation policy) is refused by the dev cluster too, before it writes anything, and an object created with the
// resourceVersion it was read with is refused as the real storage refuses it.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { contextFor, deleteNamespace, freshNamespace, kubeconfigPath, repoRoot, runCommand } from '../harness/cluster.js';

// Debian's interpreter, the one python3-kubernetes is installed for
const PYTHON = '/usr/bin/python3';
const SCRIPT = join(repoRoot, 'test/e2e/devcluster/fixtures/python-write-options.py');

interface Refusal {
  status: number;
  reason: string | null;
  message: string;
}

describe('write options through the Python kubernetes client', () => {
  let ns: string;
  before(async () => {
    ns = await freshNamespace('pyopts');
  });
  after(async () => {
    await deleteNamespace(ns);
  });

  test('dry_run other than "All" and unknown policies are 422 and change nothing; a create carrying a resourceVersion is 500', async () => {
    const r = await runCommand(PYTHON, [SCRIPT, kubeconfigPath(), contextFor('admin'), ns], { timeoutMs: 60_000 });
    assert.equal(r.code, 0, `python exited ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
    const result = JSON.parse(r.stdout) as Record<string, Refusal | unknown>;
    const dryRun = (kind: string) => ({ status: 422, reason: 'Invalid', message: `${kind}.meta.k8s.io "" is invalid: dryRun: Unsupported value: []string{"all"}: supported values: "All"` });
    // before: each of these was taken for a real write (the ConfigMap "typo" created, "kept" deleted or changed)
    assert.deepEqual(result.create_dry_run_all_lowercase, dryRun('CreateOptions'));
    assert.deepEqual(result.delete_dry_run_all_lowercase, dryRun('DeleteOptions'));
    assert.deepEqual(result.patch_dry_run_all_lowercase, dryRun('PatchOptions'));
    assert.deepEqual(result.delete_collection_dry_run_all_lowercase, dryRun('DeleteOptions'));
    assert.deepEqual(result.delete_policy_lowercase, {
      status: 422,
      reason: 'Invalid',
      message: 'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: "orphan": supported values: "Foreground", "Background", "Orphan", "nil"',
    });
    assert.equal(result.dry_run_answer, 'dry');
    // the real storage's error, which the server does not classify: a 500 without a reason
    assert.deepEqual(result.create_with_resource_version, { status: 500, reason: null, message: 'resourceVersion should not be set on objects to be created' });
    assert.deepEqual(result.kept_data, { a: '1' });
    assert.deepEqual(result.names, ['kept']);
  });
});
