// The dev cluster's registry: Debian's docker-registry on loopback, which the first node's containerd pulls from over
// plain HTTP. An image berth makes (here a Concourse rootfs artifact: a rootfs/ folder and metadata.json, read and
// pushed by berth's own registry code) is pushed by digest and runs as a pod that names it; then it is deleted.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ImagePusher } from '../../../src/registry/image-push.js';
import { assembleImage } from '../../../src/registry/oci-image.js';
import { readRootfsArtifact } from '../../../src/registry/rootfs-artifact.js';
import { deleteNamespace, freshNamespace, kubeConfig, kubectlOk, readClusterState, waitForPod } from '../harness/cluster.js';

let ns: string;
let work: string;
before(async () => {
  ns = await freshNamespace('registry');
  work = mkdtempSync(join(tmpdir(), 'berth-e2e-registry-'));
});
after(async () => {
  await deleteNamespace(ns);
  rmSync(work, { recursive: true, force: true });
});

/** busybox (static) as the artifact's whole filesystem, a file of its own, and an env value in metadata.json */
function rootfsArtifact(dir: string): void {
  mkdirSync(join(dir, 'rootfs', 'bin'), { recursive: true });
  copyFileSync('/bin/busybox', join(dir, 'rootfs', 'bin', 'busybox'));
  for (const tool of ['sh', 'cat']) symlinkSync('busybox', join(dir, 'rootfs', 'bin', tool));
  writeFileSync(join(dir, 'rootfs', 'hello.txt'), 'made by the step before\n');
  writeFileSync(join(dir, 'metadata.json'), JSON.stringify({ env: ['GREETING=from-metadata', 'PATH=/bin'], user: '' }));
}

test('an image made from a rootfs artifact, pushed by digest to the dev registry, runs as a pod; deleted, it is gone', async () => {
  const { registry } = readClusterState();
  // on the pods' bridge, not loopback: workers and pods live in network namespaces of their own
  assert.equal(registry, '10.244.0.1:5115');
  const artifact = join(work, 'artifact');
  rootfsArtifact(artifact);
  const blobs = join(work, 'blobs');
  mkdirSync(blobs);
  const { image } = await readRootfsArtifact(artifact, blobs);
  const pusher = new ImagePusher(registry, `e2e/rootfs-${process.pid}`, { insecure: [registry] });
  const pushed = await pusher.pushImage(assembleImage(image));
  assert.match(pushed.reference, new RegExp(`^10\\.244\\.0\\.1:5115/e2e/rootfs-${process.pid}@sha256:[0-9a-f]{64}$`));

  const pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'from-artifact' },
    spec: {
      restartPolicy: 'Never',
      terminationGracePeriodSeconds: 1,
      containers: [{ name: 'main', image: pushed.reference, command: ['/bin/sh', '-c', 'cat /hello.txt; echo "$GREETING"'] }],
    },
  };
  await kubectlOk(['apply', '-n', ns, '-f', '-'], { input: JSON.stringify(pod) });
  const done = await waitForPod(kubeConfig(), ns, 'from-artifact', (p) => p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed', 90_000);
  assert.equal(done.status?.phase, 'Succeeded', JSON.stringify(done.status?.containerStatuses));
  assert.equal(await kubectlOk(['logs', '-n', ns, 'from-artifact']), 'made by the step before\nfrom-metadata\n');
  assert.equal(done.status?.containerStatuses?.[0]?.imageID, pushed.reference, 'the node ran exactly the pushed digest');

  assert.equal(await pusher.deleteManifest(pushed.digest), true);
  assert.equal(await pusher.manifestExists(pushed.digest), false);
});
