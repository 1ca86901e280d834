// berth serve --image-server on a node that trusts only berth's image CA (`ca =` in containerd's _default/hosts.toml):
// with --image-server-ca, each image pod presents a certificate the CA issued for its address, and the node pulls.
// The file changes the node's registry trust for every client, so it runs alone (harness/suites.ts, RUNS_ALONE).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { berthCli, BUSYBOX, freshNamespace, loadIntoNode, runCommand } from '../harness/cluster.js';
import { withNodeTrustingOnly } from '../harness/node-trust.js';
import { BERTH_IMAGE } from '../incluster/recipes-env.js';
import { eventually } from '../../util/eventually.js';
import { startBerth, stopAndCheckLeftovers } from './serve-env.js';

const prefix = `ic${process.pid}`;

describe('berth serve --image-server-ca: nodes that trust only the image CA pull what it serves', () => {
  test('the start check pulls; a committed image runs from its pod, whose certificate the CA issued', async () => {
    await loadIntoNode(BERTH_IMAGE);
    const work = mkdtempSync(join(tmpdir(), 'berth-serve-ca-'));
    const caDir = join(work, 'image-ca');
    const made = await runCommand(process.execPath, [berthCli, 'image-ca', caDir, '--ip-range', '10.244.0.0/16']);
    assert.equal(made.code, 0, made.stderr);
    const namespace = await freshNamespace('serve-image-ca');
    const instance = `${prefix}-ca`;
    try {
      await withNodeTrustingOnly(readFileSync(join(caDir, 'tls.crt'), 'utf8'), async () => {
        let said = '';
        const engine = await startBerth(namespace, instance, {
          extra: ['--image-server', BERTH_IMAGE, '--image-server-ca', caDir],
          onOutput: (all) => (said = all),
        });
        try {
          await eventually('the check of the nodes', () => /pulled one|cannot pull|could not check/.test(said), { timeoutMs: 120_000 });
          assert.match(said, new RegExp(`^berth serve: images built and committed here are served from pods of ${BERTH_IMAGE}: node \\S+ pulled one$`, 'm'));
          const c = `${prefix}-ca-commit`;
          await engine.dockerOk(['run', '-d', '--name', c, BUSYBOX, 'sh', '-c', 'echo trusted > /made; exec sleep 600']);
          await engine.dockerOk(['exec', c, 'sh', '-c', 'until [ -e /made ]; do sleep 0.1; done']);
          const committed = `localhost/${prefix}-ca-committed:1`;
          await engine.dockerOk(['commit', c, committed]);
          await engine.dockerOk(['rm', '-f', c]);
          assert.equal(await engine.dockerOk(['run', '--rm', committed, 'cat', '/made'], { timeoutMs: 180_000 }), 'trusted\n');
        } finally {
          await stopAndCheckLeftovers(engine, namespace, instance);
        }
      });
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  });
});
