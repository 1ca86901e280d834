// docker build through buildImage with a fake builder (no cluster): its log is the build's output, the docker save
// archive it leaves at /out/image.tar is pushed by digest to Debian's docker-registry on 127.0.0.1, and the builder is
// removed whatever the outcome.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { Readable, Writable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { pack } from 'tar-stream';
import { registryOutlet } from '../../../../src/dockerapi/images/image-outlet.js';
import { buildImage, NO_BUILD_TARGET, NO_BUILDER, type BuildDeps } from '../../../../src/dockerapi/images/build.js';
import { parseBuildRequest, type BuildRequest } from '../../../../src/dockerapi/images/build-request.js';
import { BuildStream, IMAGE_READY } from '../../../../src/dockerapi/images/build-stream.js';
import type { ContainerRecord, CreateBody } from '../../../../src/dockerapi/model.js';
import { ImagePusher } from '../../../../src/registry/image-push.js';
import type { PushTarget } from '../../../../src/registry/push-target.js';
import { heldTar, type HeldTar } from '../../../../src/runtime/files.js';
import { startRegistry, type Registry } from '../../../e2e/catalog/servers.js';

const BUILDER_IMAGE = 'localhost/berth/builder:1';
const PREFIX = 'builds';
let registry: Registry;
before(async () => {
  registry = await startRegistry({ deletes: true });
});
after(async () => {
  await registry.close();
});

const sha256 = (b: Buffer): string => createHash('sha256').update(b).digest('hex');

async function tarOf(files: Record<string, Buffer | string>): Promise<Buffer> {
  const tar = pack();
  for (const [name, content] of Object.entries(files)) tar.entry({ name, mode: 0o644, mtime: new Date(0) }, content);
  tar.finalize();
  return buffer(tar);
}

const CONFIG = {
  architecture: 'amd64',
  os: 'linux',
  created: '2026-11-29T10:00:00Z',
  config: { Env: ['PATH=/usr/bin:/bin', 'BUILT=1'], Labels: { 'org.example.kind': 'built' }, Cmd: ['cat', '/hello'] },
};

/** A docker save archive of one image: one uncompressed layer holding /hello, its config naming that layer's digest. */
async function dockerSave(): Promise<{ archive: Buffer; configDigest: string }> {
  const layer = await tarOf({ hello: 'built by the test\n' });
  const layerHex = sha256(layer);
  const config = Buffer.from(JSON.stringify({ ...CONFIG, rootfs: { type: 'layers', diff_ids: [`sha256:${layerHex}`] } }));
  const configHex = sha256(config);
  const manifest = [{ Config: `${configHex}.json`, RepoTags: ['myapp:1'], Layers: [`${layerHex}.tar`] }];
  const archive = await tarOf({ 'manifest.json': JSON.stringify(manifest), [`${configHex}.json`]: config, [`${layerHex}.tar`]: layer });
  return { archive, configDigest: `sha256:${configHex}` };
}

async function catalog(): Promise<string[]> {
  const res = await fetch(`http://${registry.host}/v2/_catalog`);
  assert.equal(res.status, 200);
  return ((await res.json()) as { repositories: string[] }).repositories;
}

/** A BuildStream over a sink; `shown()` is the text of its stream messages, `messages()` every message. */
function output(quiet = false): { stream: BuildStream; messages(): unknown[]; shown(): string } {
  let written = '';
  const out = new Writable({
    write(chunk: Buffer, _enc, done) {
      written += chunk.toString();
      done();
    },
  });
  const messages = (): unknown[] =>
    written
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as unknown);
  return {
    stream: new BuildStream(out, quiet),
    messages,
    shown: () =>
      messages()
        .map((m) => (m as { stream?: string }).stream ?? '')
        .join(''),
  };
}

interface Script {
  /** Each followLog's chunks, in turn. */
  logs: string[][];
  /** exitCode's answers, in turn (the last repeats). */
  exits: (number | undefined)[];
  /** What `cat /out/image.tar` writes, and its exit code. */
  image?: Buffer;
  startError?: string;
  target?: PushTarget;
  builderImage?: string;
}

/** BuildDeps over a scripted builder, and what was asked of it. */
function fakeBuilder(script: Script): BuildDeps & {
  created: CreateBody[];
  put: { path: string; tar: HeldTar }[];
  started: number;
  logsOpened: number;
  exitWaits: number[];
  execs: string[][];
  removed: string[];
} {
  const builder = { id: 'builder-1', name: 'builder' } as ContainerRecord;
  const self = {
    outlet:
      'target' in script
        ? script.target && registryOutlet(script.target, 600)
        : registryOutlet({ registry: registry.host, prefix: PREFIX, plainHttp: true }, 600),
    builderImage: 'builderImage' in script ? script.builderImage : BUILDER_IMAGE,
    insecure: ['mirror.example:5000'],
    // berth made `made:1` (a commit or an earlier build)
    basesFor: (dockerfile: string) =>
      /^FROM made:1$/m.test(dockerfile) ? [{ name: 'made:1', ref: `${registry.host}/p/made-1234@sha256:${'a'.repeat(64)}` }] : [],
    created: [] as CreateBody[],
    put: [] as { path: string; tar: HeldTar }[],
    started: 0,
    logsOpened: 0,
    exitWaits: [] as number[],
    execs: [] as string[][],
    removed: [] as string[],
    async createBuilder(body: CreateBody): Promise<ContainerRecord> {
      self.created.push(body);
      return builder;
    },
    async putArchive(c: ContainerRecord, path: string, archive: Promise<HeldTar>): Promise<void> {
      assert.equal(c, builder);
      self.put.push({ path, tar: await archive });
    },
    async start(c: ContainerRecord): Promise<void> {
      assert.equal(c, builder);
      assert.equal(self.put.length, 1, 'the context is in place before the start');
      self.started++;
      if (script.startError) throw new Error(script.startError);
    },
    async followLog(c: ContainerRecord): Promise<Readable> {
      assert.equal(c, builder);
      const chunks = script.logs[self.logsOpened++];
      assert.ok(chunks, `followLog opened ${self.logsOpened} times, the script has ${script.logs.length} logs`);
      return Readable.from(chunks.map((s) => Buffer.from(s)));
    },
    async exitCode(c: ContainerRecord, ms: number): Promise<number | undefined> {
      assert.equal(c, builder);
      self.exitWaits.push(ms);
      return script.exits[Math.min(self.exitWaits.length, script.exits.length) - 1];
    },
    async execStream(c: ContainerRecord, argv: string[], io: { stdout: Writable; stderr: Writable }): Promise<number> {
      assert.equal(c, builder);
      self.execs.push(argv);
      if (!script.image) {
        io.stderr.write('cat: /out/image.tar: No such file or directory\n');
        return 1;
      }
      // in pieces, as an exec's stdout comes
      for (let i = 0; i < script.image.length; i += 4096) io.stdout.write(script.image.subarray(i, i + 4096));
      return 0;
    },
    async remove(c: ContainerRecord): Promise<void> {
      self.removed.push(c.id);
    },
  };
  return self;
}

const request = (query = 't=myapp:1&t=myapp:latest'): BuildRequest => parseBuildRequest(new URLSearchParams(query));
const context = (): Promise<HeldTar> => tarOf({ Dockerfile: 'FROM busybox\nRUN echo hi\n' }).then(heldTar);

const LOG = ['STEP 1/2: FROM busybox\n', 'Getting image source signatures\n', 'STEP 2/2: RUN echo hi\n', 'hi\n', 'COMMIT\n', `${IMAGE_READY}\n`];
const SHOWN = 'Step 1/2 : FROM busybox\nGetting image source signatures\nStep 2/2 : RUN echo hi\nhi\nCOMMIT\n';

test('a build: the builder is made and fed, its log shown, its image pushed by digest with its config; release deletes it', async () => {
  const { archive, configDigest } = await dockerSave();
  const deps = fakeBuilder({ logs: [LOG], exits: [undefined], image: archive });
  const out = output();
  const ctx = context();
  const before = Math.ceil(Date.now() / 1000);
  const built = await buildImage(deps, request('t=myapp:1&buildargs=%7B%22A%22%3A%221%22%7D'), ctx, out.stream);
  const after = Math.ceil(Date.now() / 1000);

  assert.equal(built.id, configDigest, "the image's id is its config's digest");
  const pullRef = new RegExp(`^${registry.host.replace(/\./g, '\\.')}/${PREFIX}/myapp-[0-9a-f]{8}@sha256:[0-9a-f]{64}$`);
  assert.match(built.pullRef, pullRef);
  assert.deepEqual(built.config, CONFIG.config);
  assert.equal(built.created, CONFIG.created);
  assert.equal(built.architecture, 'amd64');
  assert.equal(built.os, 'linux');
  const [repo, digest] = built.pullRef.slice(registry.host.length + 1).split('@') as [string, string];
  const pushed = new ImagePusher(registry.host, repo);
  assert.equal(await pushed.manifestExists(digest), true);
  assert.ok((await catalog()).includes(repo));
  const [tag, ...more] = await pushed.tags();
  const expires = Number(tag?.replace('berth-expires-', ''));
  assert.ok(more.length === 0 && expires >= before + 600 && expires <= after + 600, `one expiry tag, --ttl after the build: ${tag} ${more}`);
  assert.equal(await pushed.manifestDigest(tag!), digest);

  assert.equal(deps.created.length, 1);
  const body = deps.created[0]!;
  assert.equal(body.Image, BUILDER_IMAGE);
  assert.deepEqual(body.Cmd, ['berth-build', '-f', '/context/Dockerfile', '--build-arg', 'A=1']);
  assert.equal(body.HostConfig?.Privileged, true);
  assert.deepEqual(body.Env, [`BERTH_BUILD_INSECURE=mirror.example:5000,${registry.host}`, 'BERTH_BUILD_BASES=']);
  assert.equal(deps.put.length, 1);
  assert.equal(deps.put[0]!.path, '/context');
  assert.equal(deps.put[0]!.tar, await ctx, 'the context given is what was put');
  assert.equal(deps.started, 1);
  assert.equal(deps.logsOpened, 1);
  assert.deepEqual(deps.exitWaits, [], 'the marker ends the build: no wait for the exit');
  assert.deepEqual(deps.execs, [['cat', '/out/image.tar']]);
  assert.deepEqual(deps.removed, ['builder-1']);
  assert.equal(out.shown(), SHOWN, 'the marker is not shown');

  await built.release();
  assert.equal(await pushed.manifestExists(digest), false, 'release deleted the manifest');
});

test('a failed build: rejected with the error line and the exit code; the builder removed, nothing pushed', async () => {
  const before = await catalog();
  const log = [
    'STEP 1/2: FROM busybox\nSTEP 2/2: RUN exit 3\n',
    'error building at STEP "RUN exit 3": exit status 3\n',
    'berth-build: the build failed (exit 3)\n',
  ];
  const deps = fakeBuilder({ logs: [log], exits: [3] });
  const out = output();
  await assert.rejects(buildImage(deps, request(), context(), out.stream), (err: Error) => {
    assert.match(err.message, /the build failed: error building at STEP "RUN exit 3": exit status 3/);
    assert.match(err.message, /exited 3/);
    return true;
  });
  assert.deepEqual(deps.removed, ['builder-1']);
  assert.deepEqual(deps.execs, [], 'no image is read out of a failed build');
  assert.equal(deps.logsOpened, 1, 'a log that ended with the builder is not opened again');
  assert.equal(out.shown(), 'Step 1/2 : FROM busybox\nStep 2/2 : RUN exit 3\nerror building at STEP "RUN exit 3": exit status 3\n');
  assert.deepEqual(await catalog(), before, 'no repository was pushed');
});

test('without a builder image or a registry to keep the image in, nothing is created', async () => {
  const noBuilder = fakeBuilder({ logs: [], exits: [], builderImage: undefined });
  await assert.rejects(buildImage(noBuilder, request(), context(), output().stream), (err: Error) => err.message === NO_BUILDER);
  assert.deepEqual(noBuilder.created, []);
  const noTarget = fakeBuilder({ logs: [], exits: [], target: undefined });
  await assert.rejects(buildImage(noTarget, request(), context(), output().stream), (err: Error) => err.message === NO_BUILD_TARGET);
  assert.deepEqual(noTarget.created, []);
  assert.match(NO_BUILDER, /--builder-image IMAGE/);
  assert.match(NO_BUILD_TARGET, /--image-registry REGISTRY\/PREFIX.*--image-server IMAGE/);
});

test('a builder the namespace refuses to run privileged: the error names the label that allows it; the builder removed', async () => {
  const refusal =
    'pods "berth-builder" is forbidden: violates PodSecurity "baseline:latest": privileged (container "main" must not set securityContext.privileged=true)';
  const deps = fakeBuilder({ logs: [], exits: [], startError: refusal });
  await assert.rejects(buildImage(deps, request(), context(), output().stream), (err: Error) => {
    assert.match(err.message, /^the build needs a privileged pod/);
    assert.match(err.message, /pod-security\.kubernetes\.io\/enforce=privileged/);
    assert.ok(err.message.includes(refusal), 'the cluster’s words are kept');
    return true;
  });
  assert.equal(deps.logsOpened, 0);
  assert.deepEqual(deps.removed, ['builder-1']);
});

test('a log that breaks while the builder runs is opened again and shown from where it broke, each line once', async () => {
  const { archive, configDigest } = await dockerSave();
  const whole = LOG.join('');
  const broken = whole.indexOf('RUN echo hi');
  // the first log ends in the middle of a line; the second is the whole log again, in other pieces
  const first = [whole.slice(0, 10), whole.slice(10, broken)];
  const second: string[] = [];
  for (let i = 0; i < whole.length; i += 7) second.push(whole.slice(i, i + 7));
  const deps = fakeBuilder({ logs: [first, second], exits: [undefined], image: archive });
  const out = output();
  const built = await buildImage(deps, request(), context(), out.stream);
  assert.equal(built.id, configDigest);
  assert.equal(deps.logsOpened, 2);
  assert.equal(deps.exitWaits.length, 1, 'the break waited once for the builder to show it ended');
  assert.equal(out.shown(), SHOWN);
  assert.deepEqual(deps.removed, ['builder-1']);
  await built.release();
});

test('a client that goes away cancels the build: the builder is removed at once, nothing is read out or pushed', async () => {
  const before = await catalog();
  const gone = new AbortController();
  const deps = fakeBuilder({ logs: [LOG], exits: [undefined], image: Buffer.from('never read') });
  const followLog = deps.followLog.bind(deps);
  deps.followLog = async (c) => {
    const log = await followLog(c);
    gone.abort(); // the client leaves while the build runs
    return log;
  };
  const out = output();
  await assert.rejects(buildImage(deps, request(), context(), out.stream, gone.signal), /the build was cancelled: its client went away/);
  assert.ok(deps.removed.length >= 1 && deps.removed.every((id) => id === 'builder-1'), 'the builder is removed on the abort');
  assert.deepEqual(deps.execs, [], 'nothing is read out of a cancelled build');
  assert.deepEqual(await catalog(), before, 'nothing was pushed');
});

test('a FROM naming an image berth made: the builder is given its pushed digest under that name', async () => {
  const { archive } = await dockerSave();
  const deps = fakeBuilder({ logs: [LOG], exits: [undefined], image: archive });
  const made = tarOf({ Dockerfile: 'FROM made:1\nRUN echo on top\n' }).then(heldTar);
  await buildImage(deps, request(), made, output().stream);
  assert.deepEqual(deps.created[0]!.Env, [
    `BERTH_BUILD_INSECURE=mirror.example:5000,${registry.host}`,
    `BERTH_BUILD_BASES=made:1=${registry.host}/p/made-1234@sha256:${'a'.repeat(64)}`,
  ]);
});

test('a context that is no archive fails before any builder exists', async () => {
  const deps = fakeBuilder({ logs: [], exits: [] });
  await assert.rejects(buildImage(deps, request(), Promise.reject(new Error('archive too large')), output().stream), /archive too large/);
  assert.deepEqual(deps.created, [], 'no builder was made');
});
