// A task step's `image:` naming an artifact, as Concourse runs a task in the image a step fetched or built: berth reads
// the artifact as an image (rootfs/ with metadata.json, or an image tarball), pushes it by digest to the registry
// --image-registry names (here the dev cluster's) or serves it from a pod of the berth image (--image-server), runs the
// step's pod from that digest, and deletes the image at the end.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { berthCli, BUSYBOX, readClusterState } from '../harness/cluster.js';
import { BERTH_IMAGE } from '../incluster/recipes-env.js';
import { ROOTFS_PLAN } from './image-plans.js';
import { runCommand, setUpTask, tempTree, type TaskEnv } from './task-env.js';

/** An artifact that holds no image (an empty output), and an image: naming no artifact of the plan. */
const MISSING_PLAN = `
plan:
  - task: make-nothing
    config:
      platform: linux
      outputs: [{ name: img }]
      run: { path: "true" }
  - task: runs-in-nothing
    image: img
    config:
      platform: linux
      run: { path: echo, args: [ran] }
`;
const NO_ARTIFACT_PLAN = `
plan:
  - task: runs-in-nowhere
    image: never-made
    config:
      platform: linux
      run: { path: echo, args: [ran] }
`;

const TARBALL_PLAN = `
plan:
  - task: run-in-tarball
    image: img
    config:
      platform: linux
      run: { path: sh, args: [-c, 'echo "in the tarball image: $PATH"'] }
`;

const BROKEN_PLAN = `
plan:
  - task: make-broken
    config:
      platform: linux
      outputs: [{ name: img }]
      run: { path: sh, args: [-c, 'mkdir -p img/rootfs && echo "{not json" > img/metadata.json'] }
  - task: never-runs
    image: img
    config:
      platform: linux
      run: { path: echo, args: [ran] }
`;

describe('berth task plan run: a step whose image is an artifact', () => {
  let t: TaskEnv;
  let registry: string;
  const work = tempTree({});
  const planFile = (name: string, text: string): string => {
    const file = join(work.dir, name);
    writeFileSync(file, text);
    return file;
  };
  const plan = (args: string[], registryFlag = [`--image-registry`, `http://${registry}/berth-e2e`]) =>
    runCommand(process.execPath, [berthCli, 'task', 'plan', 'run', ...args, '--image', BUSYBOX, ...registryFlag], { env: t.env(), timeoutMs: 180_000 });
  /**
   * An image.tar of an image of its own (busybox and a label): a pushed image with a preloaded one's id makes the
   * kubelet take the preloaded one for pulled (KubeletEnsureSecretPulledImages), and then pull it, from no registry.
   */
  const tarballArtifact = (label: string, format: 'docker-archive' | 'oci-archive' = 'docker-archive'): string => {
    const dir = join(work.dir, `tarball-${label}`);
    mkdirSync(dir);
    const tag = `localhost/berth-e2e/tarball-${label}-${process.pid}:1`;
    const context = join(work.dir, `tarball-context-${label}`);
    mkdirSync(context);
    writeFileSync(join(context, 'Containerfile'), `FROM ${BUSYBOX}\nLABEL berth.e2e=tarball-${label}\n`);
    execFileSync('podman', ['build', '-q', '-t', tag, context]);
    execFileSync('podman', ['save', '--format', format, '-o', join(dir, 'image.tar'), tag]);
    execFileSync('podman', ['rmi', tag]);
    return dir;
  };
  const served = ['--image-server', BERTH_IMAGE];
  // this file's own pushes (berth-e2e/img-RANDOM): other files push to the dev registry meanwhile
  const repositories = async (): Promise<string[]> =>
    (((await (await fetch(`http://${registry}/v2/_catalog`)).json()) as { repositories: string[] | null }).repositories ?? []).filter((r) =>
      /^berth-e2e\/img-/.test(r),
    );
  before(async () => {
    t = await setUpTask('task-image');
    registry = readClusterState().registry;
  });
  after(async () => {
    await t?.close();
    work.remove();
  });

  it("rootfs/ and metadata.json written by one step are the next step's image: its file, its env; deleted from the registry at the end", async () => {
    const r = await plan([planFile('rootfs.yml', ROOTFS_PLAN)]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, 'made in step one\nfrom the metadata\n');
    assert.match(r.stderr, new RegExp(`^image img: ${registry.replace(/\./g, '\\.')}/berth-e2e/img-[0-9a-f]{8}@sha256:[0-9a-f]{64}$`, 'm'));
    assert.match(r.stderr, /^succeeded$/m);
    assert.deepEqual(await t.leftovers(), []);
    const pushedTo = /berth-e2e\/img-[0-9a-f]{8}/.exec(r.stderr)![0];
    const digest = /@(sha256:[0-9a-f]{64})/.exec(r.stderr)![1];
    assert.equal((await fetch(`http://${registry}/v2/${pushedTo}/manifests/${digest}`, { method: 'HEAD' })).status, 404, 'deleted when the plan ended');
  });

  it("an image tarball (image.tar, as registry-image writes with format: oci) given with -i is the step's image", async () => {
    const r = await plan([planFile('tarball.yml', TARBALL_PLAN), '-i', `img=${tarballArtifact('pushed')}`]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, 'in the tarball image: /bin\n', 'the ENV of the image in the tarball');
    assert.deepEqual(await t.leftovers(), []);
  });

  it('a corrupt image artifact fails its step naming it and why; the step never runs, nothing is pushed or left', async () => {
    const before = await repositories();
    const r = await plan([planFile('broken.yml', BROKEN_PLAN)]);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /task never-runs \(line \d+\): image `img`: .*metadata\.json/);
    assert.doesNotMatch(r.stdout, /ran/);
    assert.deepEqual(await t.leftovers(), []);
    assert.deepEqual(await repositories(), before, 'no repository was pushed to');
  });

  it('an artifact without an image, and an image: naming no artifact, each fail their step naming it and why; nothing is left', async () => {
    const before = await repositories();
    const empty = await plan([planFile('missing.yml', MISSING_PLAN)]);
    assert.notEqual(empty.code, 0);
    assert.match(empty.stderr, /task runs-in-nothing \(line \d+\): image `img`: .*holds no image: an image artifact has rootfs\/ beside metadata\.json/);
    const none = await plan([planFile('no-artifact.yml', NO_ARTIFACT_PLAN)]);
    assert.notEqual(none.code, 0);
    assert.match(none.stderr, /task runs-in-nowhere \(line \d+\): image `never-made`: no such artifact in the plan/);
    assert.doesNotMatch(empty.stdout + none.stdout, /ran/);
    assert.deepEqual(await t.leftovers(), []);
    assert.deepEqual(await repositories(), before, 'nothing was pushed');
  });

  it('without --image-registry the plan is refused before any step, saying what to give', async () => {
    const r = await plan([planFile('rootfs-again.yml', ROOTFS_PLAN)], []);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /task run-in-it \(line \d+\): image: names an artifact, .*--image-registry REGISTRY\/PREFIX.*--image-server IMAGE/);
    assert.doesNotMatch(r.stderr, /^task make-image$/m, 'no step ran');
    assert.deepEqual(await t.leftovers(), []);
  });

  describe('served from a pod (--image-server: no registry)', () => {
    it('the rootfs written by one step is served to the next from a pod of the berth image; the pod is deleted at the end', async () => {
      const before = await repositories();
      const r = await plan([planFile('rootfs-served.yml', ROOTFS_PLAN)], served);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout, 'made in step one\nfrom the metadata\n');
      assert.match(r.stderr, /^image img: \d+\.\d+\.\d+\.\d+:5443\/berth\/img@sha256:[0-9a-f]{64}$/m, 'pulled from the pod address');
      assert.match(r.stderr, /^succeeded$/m);
      assert.deepEqual(await t.leftovers(), [], 'the image pod is deleted');
      assert.deepEqual(await repositories(), before, 'no registry was used');
    });

    it('an image tarball is served the same way, here an OCI archive (podman save --format oci-archive)', async () => {
      const r = await plan([planFile('tarball-served.yml', TARBALL_PLAN), '-i', `img=${tarballArtifact('served', 'oci-archive')}`], served);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout, 'in the tarball image: /bin\n');
      assert.deepEqual(await t.leftovers(), []);
    });

    it('a corrupt artifact fails its step before any pod serves it; nothing is left', async () => {
      const r = await plan([planFile('broken-served.yml', BROKEN_PLAN)], served);
      assert.notEqual(r.code, 0);
      assert.match(r.stderr, /task never-runs \(line \d+\): image `img`: .*metadata\.json/);
      assert.doesNotMatch(r.stdout, /ran/);
      assert.deepEqual(await t.leftovers(), []);
    });

    it('an --image-server image that cannot serve fails the step saying what --image-server must name; its pod is deleted', async () => {
      const r = await plan([planFile('rootfs-bad-server.yml', ROOTFS_PLAN)], ['--image-server', BUSYBOX]);
      assert.notEqual(r.code, 0);
      assert.match(
        r.stderr,
        /task run-in-it \(line \d+\): image `img`: the image server in pod image-[0-9a-f]{8} did not start: .*--image-server names the berth image/,
      );
      assert.doesNotMatch(r.stdout, /from the metadata/);
      assert.deepEqual(await t.leftovers(), []);
    });
  });
});
