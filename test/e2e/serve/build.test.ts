// docker build through berth serve (issue 31) with the docker CLI and testcontainers-node, and podman's service as the
// reference: the fixture context (test/e2e/fixtures/build-context) built with a build arg, a target stage and its
// .dockerignore, the image run; a failing build; a commit. berth builds in a privileged builder pod
// (localhost/berth/builder:1) whose base image comes from the dev cluster's registry, and pushes the image there for
// the node to pull, or, with --image-server, serves it from a pod of the berth image.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import {
  berthCli,
  BUSYBOX,
  freshNamespace,
  kubeconfigPath,
  kubectlOk,
  loadIntoNode,
  readClusterState,
  repoRoot,
  runCommand,
  type Result,
} from '../harness/cluster.js';
import { dropNamespace, type DockerEngine, startBerth, startPodman, stopAndCheckLeftovers } from './serve-env.js';
import { BERTH_IMAGE } from '../incluster/recipes-env.js';
import { eventually } from '../../util/eventually.js';

const BUILDER = 'localhost/berth/builder:1';
const CONTEXT = join(repoRoot, 'test/e2e/fixtures/build-context');
const scenario = join(repoRoot, 'dist/test/e2e/serve/tc-build-scenario.js');
const prefix = `bb${process.pid}`;

type Step = { ok: boolean; value?: unknown; error?: string };

for (const kind of ['podman', 'berth'] as const) {
  describe(`docker build against ${kind}`, () => {
    let engine: DockerEngine;
    let namespace = '';
    const instance = `${prefix}-build`;
    /** berth's builder pulls the base from the registry; podman has it in its own store */
    let base = '';
    const built: string[] = [];
    const build = (args: string[], input?: string): Promise<Result> =>
      runCommand('docker', ['build', ...(base ? ['--build-arg', `BASE=${base}`] : []), ...args], {
        env: { ...process.env, DOCKER_HOST: engine.dockerHost, DOCKER_BUILDKIT: '0' },
        timeoutMs: 300_000,
        ...(input ? { input } : {}),
      });

    before(async () => {
      if (kind === 'berth') {
        const { registry } = readClusterState();
        base = `${registry}/berth-e2e/busybox:1`;
        const pushed = await runCommand('podman', ['push', '--tls-verify=false', BUSYBOX, base], { timeoutMs: 120_000 });
        assert.equal(pushed.code, 0, pushed.stderr);
        await loadIntoNode(BUILDER);
        namespace = await freshNamespace('serve-build');
        engine = await startBerth(namespace, instance, {
          extra: ['--image-registry', `http://${registry}/serve-build`, '--builder-image', BUILDER],
        });
      } else {
        engine = await startPodman();
      }
    });

    after(async () => {
      try {
        for (const t of built) await engine.docker(['rmi', t]);
      } finally {
        if (kind === 'berth') await stopAndCheckLeftovers(engine, namespace, instance);
        else await engine.stop();
      }
    });

    test('docker build -t x --build-arg --target . && docker run x: the stage asked for, the arg, the context without .dockerignore', async () => {
      const tag = `localhost/${prefix}-cli-${kind}:1`;
      built.push(tag);
      const r = await build(['-t', tag, '--build-arg', 'GREETING=the docker CLI', '--target', 'final', CONTEXT]);
      assert.equal(r.code, 0, r.stderr + r.stdout);
      // docker's classic builder writes `Step 1/9 : FROM …`; buildah (podman, and berth's builder) numbers per stage
      assert.match(r.stdout, kind === 'berth' ? /^\[1\/2\] Step 1\/3 : FROM /m : /STEP 1\/3: FROM /, 'the output names the steps');
      assert.match(r.stdout, new RegExp(`Successfully tagged ${tag}`));
      const run = await engine.dockerOk(['run', '--rm', tag], { timeoutMs: 180_000 });
      assert.equal(run, 'built with the docker CLI\nkept in the image\nDockerfile\nkept.txt\nBUILT=yes\n');
      const inspect = JSON.parse(await engine.dockerOk(['image', 'inspect', tag])) as Array<{
        Id: string;
        Config: { Labels: Record<string, string>; Env: string[] };
      }>;
      assert.equal(inspect[0]!.Config.Labels['berth.test'], 'build');
      assert.ok(inspect[0]!.Config.Env.includes('BUILT=yes'), JSON.stringify(inspect[0]!.Config.Env));
      assert.match(inspect[0]!.Id, /^sha256:[0-9a-f]{64}$/);
    });

    test('a build FROM the image built before: its files are there (berth hands the builder its pushed digest)', async () => {
      const first = `localhost/${prefix}-cli-${kind}:1`;
      const tag = `localhost/${prefix}-on-top-${kind}:1`;
      built.push(tag);
      const r = await build(['-t', tag, '-'], `FROM ${first}\nRUN cat /greeting.txt > /again.txt\nCMD ["cat", "/again.txt"]\n`);
      assert.equal(r.code, 0, r.stderr + r.stdout);
      assert.equal(await engine.dockerOk(['run', '--rm', tag], { timeoutMs: 180_000 }), 'built with the docker CLI\n');
    });

    test('a failing RUN fails the build with the command and its exit code, and leaves no container', async () => {
      const before = await engine.dockerOk(['ps', '-aq']);
      const r = await build(['-t', `localhost/${prefix}-fails:1`, '-'], 'ARG BASE=localhost/berth/busybox:1\nFROM ${BASE}\nRUN echo about to fail; exit 3\n');
      assert.equal(r.code, 1, r.stdout + r.stderr);
      assert.match(r.stdout, /about to fail/, 'the RUN step output is shown');
      assert.match(r.stderr, kind === 'berth' ? /the build failed: .*exit (status )?3/ : /exit (status|code:?) ?3|non-zero code: 3/);
      assert.equal(await engine.dockerOk(['ps', '-aq']), before, 'no builder container is left');
      const missing = await engine.docker(['image', 'inspect', `localhost/${prefix}-fails:1`]);
      assert.notEqual(missing.code, 0, 'no image under the tag');
      if (kind === 'berth') assert.equal(await kubectlOk(['-n', namespace, 'get', 'pods', '-o', 'name']), '', 'no builder pod is left');
    });

    test('testcontainers-node: fromDockerfile with build args, a target stage and .dockerignore; a failing one; a commit run again', async () => {
      const image = `localhost/${prefix}-tc-${kind}:1`;
      const commitRepo = `localhost/${prefix}-tc-commit-${kind}`;
      built.push(image, `${commitRepo}:1`);
      const r = await runCommand(process.execPath, [scenario], {
        env: {
          ...process.env,
          DOCKER_HOST: engine.dockerHost,
          TESTCONTAINERS_RYUK_DISABLED: 'true',
          TC_BUILD_CONTEXT: CONTEXT,
          TC_BUILD_BASE: base,
          TC_BUILD_IMAGE: image,
          TC_COMMIT_REPO: commitRepo,
          TC_BUSYBOX: BUSYBOX,
        },
        timeoutMs: 400_000,
      });
      assert.equal(r.code, 0, r.stderr);
      const results = JSON.parse(r.stdout.trim().split('\n').pop()!) as Record<string, Step>;
      assert.ok(results.fromDockerfile?.ok, results.fromDockerfile?.error);
      assert.equal(results.fromDockerfile!.value, 'built with testcontainers\nkept in the image\nDockerfile\nkept.txt\nBUILT=yes\n');
      const failing = results.failingBuild?.value as { built: boolean; error?: string };
      assert.equal(failing.built, false);
      assert.match(failing.error ?? '', /Failed to build image/);
      // the container's files and the --change, in a container of the committed image (podman's compat API takes
      // dockerode's commit, whose options come as a JSON body too; the docker CLI's empty body it cannot decode)
      assert.ok(results.commit?.ok, results.commit?.error);
      assert.equal(results.commit!.value, 'committed\nFROM_COMMIT=yes\n');
    });
  });
}

describe('berth serve --image-server: the images it builds and commits served from pods, no registry', () => {
  test('docker build, run, a build FROM it, docker commit and run: each image a pod; docker rmi deletes its pod; nothing left at stop', async (t) => {
    // where the time goes (a run now and then takes four times the usual): each step's seconds in the log
    let last = Date.now();
    const lap = (step: string): void => {
      t.diagnostic(`${step}: ${((Date.now() - last) / 1000).toFixed(1)} s`);
      last = Date.now();
    };
    const { registry } = readClusterState();
    const base = `${registry}/berth-e2e/busybox:1`;
    const pushed = await runCommand('podman', ['push', '--tls-verify=false', BUSYBOX, base], { timeoutMs: 120_000 });
    assert.equal(pushed.code, 0, pushed.stderr);
    await loadIntoNode(BUILDER, BERTH_IMAGE);
    lap('base pushed, builder and berth images loaded');
    const namespace = await freshNamespace('serve-image-server');
    const instance = `${prefix}-served`;
    // the base comes from the dev cluster's registry, plain http: no push target says so now, --insecure-registry does
    let said = '';
    const engine = await startBerth(namespace, instance, {
      extra: ['--image-server', BERTH_IMAGE, '--builder-image', BUILDER, '--insecure-registry', registry],
      onOutput: (all) => (said = all),
    });
    const imagePods = async (): Promise<string[]> =>
      (await kubectlOk(['-n', namespace, 'get', 'pods', '-l', 'app.kubernetes.io/component=image', '-o', 'name'])).split('\n').filter(Boolean);
    const env = { ...process.env, DOCKER_HOST: engine.dockerHost, DOCKER_BUILDKIT: '0' };
    try {
      // said at its start: it served a probe image from a pod and a node pulled it (its pods gone before it says so)
      await eventually('the check of the nodes', () => /pulled one|cannot pull|could not check/.test(said), { timeoutMs: 120_000 });
      assert.match(said, new RegExp(`^berth serve: images built and committed here are served from pods of ${BERTH_IMAGE}: node \\S+ pulled one$`, 'm'));
      lap('berth serve started, its probe pulled');
      const tag = `localhost/${prefix}-served:1`;
      const built = await runCommand(
        'docker',
        ['build', '-t', tag, '--build-arg', `BASE=${base}`, '--build-arg', 'GREETING=a pod', '--target', 'final', CONTEXT],
        {
          env,
          timeoutMs: 300_000,
        },
      );
      assert.equal(built.code, 0, built.stderr + built.stdout);
      lap('built');
      assert.equal(
        await engine.dockerOk(['run', '--rm', tag], { timeoutMs: 180_000 }),
        'built with a pod\nkept in the image\nDockerfile\nkept.txt\nBUILT=yes\n',
      );
      lap('run from its pod');
      assert.equal((await imagePods()).length, 1, 'the built image is served by a pod of its own');

      // the builder pulls the base berth made from its pod (HTTPS, the pod's own certificate)
      const onTop = `localhost/${prefix}-served-on-top:1`;
      const again = await runCommand('docker', ['build', '-t', onTop, '-'], {
        env,
        input: `FROM ${tag}\nRUN cat /greeting.txt > /again.txt\nCMD ["cat", "/again.txt"]\n`,
        timeoutMs: 300_000,
      });
      assert.equal(again.code, 0, again.stderr + again.stdout);
      lap('built FROM it');
      assert.equal(await engine.dockerOk(['run', '--rm', onTop], { timeoutMs: 180_000 }), 'built with a pod\n');
      lap('run');

      const c = `${prefix}-served-commit`;
      await engine.dockerOk(['run', '-d', '--name', c, BUSYBOX, 'sh', '-c', 'echo committed > /made; exec sleep 600']);
      await engine.dockerOk(['exec', c, 'sh', '-c', 'until [ -e /made ]; do sleep 0.1; done']);
      const committed = `localhost/${prefix}-served-committed:1`;
      await engine.dockerOk(['commit', '--change', 'ENV FROM_COMMIT=yes', c, committed]);
      await engine.dockerOk(['rm', '-f', c]);
      const run = await engine.dockerOk(['run', '--rm', committed, 'sh', '-c', 'cat /made; echo "$FROM_COMMIT"'], { timeoutMs: 180_000 });
      assert.equal(run, 'committed\nyes\n');
      assert.equal((await imagePods()).length, 3);
      lap('committed and run');

      await engine.dockerOk(['rmi', committed]);
      assert.equal((await imagePods()).length, 2, 'docker rmi deletes the pod that served the image');

      // the pod serving an image deleted under berth (as its --ttl or a lost node ends it): the image goes with it
      const pods = JSON.parse(await kubectlOk(['-n', namespace, 'get', 'pods', '-l', 'app.kubernetes.io/component=image', '-o', 'json'])) as {
        items: Array<{ metadata: { name: string; annotations?: Record<string, string> } }>;
      };
      const onTopPod = pods.items.find((p) => p.metadata.annotations?.['berth.dev/image'] === `${prefix}-served-on-top`)?.metadata.name;
      assert.ok(onTopPod, `a pod serves ${onTop}`);
      await kubectlOk(['-n', namespace, 'delete', 'pod', onTopPod, '--wait=false']);
      await eventually(`berth serve says ${onTop} is gone`, () => said.includes(`image ${onTop} is gone: its pod ${onTopPod}`), { timeoutMs: 60_000 });
      const gone = await engine.docker(['image', 'inspect', onTop]);
      assert.notEqual(gone.code, 0);
      assert.match(gone.stderr, new RegExp(`No such image: ${onTop}`));
      assert.equal(
        await engine.dockerOk(['image', 'inspect', '--format', '{{.Id}}', tag]).then((id) => id.startsWith('sha256:')),
        true,
        'the image of another pod stays',
      );
      lap('rmi, and a pod deleted under berth');
    } finally {
      await stopAndCheckLeftovers(engine, namespace, instance);
    }
  });
});

describe('a SIGKILLed berth serve leaves the image it built; berth gc --image-registry deletes it', () => {
  test('build, SIGKILL, berth gc --all: the image is gone from the registry, its pods from the namespace', async () => {
    const { registry } = readClusterState();
    const prefix = `serve-build-gc-${process.pid}`;
    const namespace = await freshNamespace('serve-build-gc');
    const engine = await startBerth(namespace, `bb${process.pid}-gc`, {
      extra: ['--image-registry', `http://${registry}/${prefix}`, '--builder-image', BUILDER],
    });
    const tagsOf = async (repo: string): Promise<string[]> =>
      ((await (await fetch(`http://${registry}/v2/${repo}/tags/list`)).json()) as { tags?: string[] | null }).tags ?? [];
    try {
      const built = await runCommand('docker', ['build', '-t', `localhost/bb${process.pid}-gc:1`, '-'], {
        env: { ...process.env, DOCKER_HOST: engine.dockerHost, DOCKER_BUILDKIT: '0' },
        input: `FROM ${registry}/berth-e2e/busybox:1\nRUN echo kept > /kept\n`,
        timeoutMs: 300_000,
      });
      assert.equal(built.code, 0, built.stderr + built.stdout);
      const catalog = (await (await fetch(`http://${registry}/v2/_catalog?n=1000`)).json()) as { repositories: string[] };
      const repos = catalog.repositories.filter((r) => r.startsWith(`${prefix}/`));
      assert.equal(repos.length, 1, `one repository of the build: ${repos.join(', ')}`);
      assert.match((await tagsOf(repos[0]!)).join(' '), /^berth-expires-\d+$/, 'the pushed image carries its expiry');
      await engine.crash();
      assert.match((await tagsOf(repos[0]!)).join(' '), /^berth-expires-\d+$/, 'a SIGKILLed berth deletes nothing');
      const gc = await runCommand(
        process.execPath,
        [berthCli, 'gc', '--kubeconfig', kubeconfigPath(), '-n', namespace, '--all', '--image-registry', `http://${registry}/${prefix}`],
        { timeoutMs: 120_000 },
      );
      assert.equal(gc.code, 0, gc.stderr);
      assert.match(gc.stdout, new RegExp(`image ${registry.replace(/\./g, '\\.')}/${repos[0]}@sha256:[0-9a-f]{64} .*deleted`));
      assert.deepEqual(await tagsOf(repos[0]!), [], 'the manifest and its tag are gone');
    } finally {
      await dropNamespace(namespace);
    }
  });
});
