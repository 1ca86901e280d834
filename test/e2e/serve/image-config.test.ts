// Image configs read from a registry: Debian's docker-registry on 127.0.0.1 holds an image built by
// podman with EXPOSE, HEALTHCHECK, USER, ENV and WORKDIR; the docker CLI against berth serve sees
// them in inspect, `-P` publishes the exposed port and berth runs the image's healthcheck. The image
// is also tagged in podman's store, where the dev cluster finds it (pods pull IfNotPresent).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { BUSYBOX, freshNamespace, kubectlOk, loadIntoNode, runCommand } from '../harness/cluster.js';
import { startRegistry, type Registry } from '../catalog/servers.js';
import { berthLeftovers, bindServeRole, type DockerEngine, dropNamespace, startBerth } from './serve-env.js';
import { eventually } from '../../util/eventually.js';

const instance = `bs${process.pid}-imgcfg`;
let engine: DockerEngine | undefined;
let registry: Registry | undefined;
let namespace = '';
let image = '';
let unread = '';
let unreadId = '';
let imageId = '';
let pushedDigest = '';
const names: string[] = [];

async function ok(cmd: string, args: string[], timeoutMs = 120_000): Promise<string> {
  const r = await runCommand(cmd, args, { timeoutMs });
  assert.equal(r.code, 0, `${cmd} ${args.join(' ')} exited ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
  return r.stdout.trim();
}

async function docker(args: string[]): Promise<string> {
  return (await engine!.dockerOk(args)).trim();
}

async function inspect<T>(kind: 'container' | 'image', ref: string, format: string): Promise<T> {
  return JSON.parse(await docker([kind, 'inspect', '-f', `{{json ${format}}}`, ref])) as T;
}

/** Removes the test image (every tag) from podman; what the node loaded goes with the cluster. */
async function removeImage(id: string): Promise<string> {
  const r = await runCommand('podman', ['rmi', '-f', id]);
  return r.code === 0 ? '' : r.stderr;
}

function httpGet(url: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, (res) => {
        let body = '';
        res.setEncoding('utf8').on('data', (d: string) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      })
      .on('error', reject);
  });
}

before(async () => {
  namespace = await freshNamespace('serve-imgcfg');
  await bindServeRole(namespace, 'shim');
  registry = await startRegistry();
  image = `${registry.host}/berth-test/web:1`;
  unread = `${registry.host}/berth-test/unread:1`;
  const dir = mkdtempSync(path.join(tmpdir(), 'berth-imgcfg-'));
  try {
    writeFileSync(
      path.join(dir, 'Containerfile'),
      [
        `FROM ${BUSYBOX}`,
        'RUN mkdir -p /www && echo hello from the image > /www/index.html',
        'WORKDIR /www',
        'ENV GREETING=hello',
        'USER 65534',
        'EXPOSE 8080',
        'HEALTHCHECK --interval=1s CMD true',
        'CMD ["httpd", "-f", "-p", "8080"]',
        '',
      ].join('\n'),
    );
    imageId = (await ok('podman', ['build', '--format', 'docker', '--layers=false', '-q', '-t', image, dir])).split('\n').pop()!;
    // an image of its own (a config of its own: containerd's CRI forgets a loaded name when a pulled image shares
    // its config), in the node's store only, never in the registry
    writeFileSync(path.join(dir, 'Containerfile'), `FROM ${image}\nLABEL berth-test=unread\n`);
    unreadId = (await ok('podman', ['build', '--format', 'docker', '--layers=false', '-q', '-t', unread, dir])).split('\n').pop()!;
    await loadIntoNode(unread);
    await ok('podman', ['push', '--tls-verify=false', '--digestfile', path.join(dir, 'digest'), image]);
    pushedDigest = readFileSync(path.join(dir, 'digest'), 'utf8').trim();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  engine = await startBerth(namespace, instance, { user: 'shim' });
});

after(async () => {
  try {
    if (engine) for (const n of names) await engine.docker(['rm', '-f', n]);
  } finally {
    await engine?.stop();
    await registry?.close();
    // the unread image first: it is built on the other
    let removed = '';
    for (const id of [unreadId, imageId]) if (id) removed += await removeImage(id);
    const left = namespace ? await berthLeftovers(namespace, instance) : [];
    if (namespace) await dropNamespace(namespace);
    assert.deepEqual(left, [], 'berth serve left objects behind after SIGTERM');
    assert.equal(removed, '', "the test image stays in podman's store");
  }
});

test('docker pull reads the config: image inspect shows ExposedPorts, Healthcheck, User and the RepoDigest podman pushed', async () => {
  const out = await docker(['pull', image]);
  assert.match(out, new RegExp(`Digest: ${pushedDigest}`));
  assert.deepEqual(await inspect('image', image, '.Config.ExposedPorts'), { '8080/tcp': {} });
  const hc = await inspect<{ Test: string[]; Interval: number }>('image', image, '.Config.Healthcheck');
  assert.deepEqual(hc.Test, ['CMD-SHELL', 'true']);
  assert.equal(hc.Interval, 1e9);
  assert.equal(await inspect('image', image, '.Config.User'), '65534');
  assert.deepEqual(await inspect('image', image, '.RepoDigests'), [`${registry!.host}/berth-test/web@${pushedDigest}`]);
});

test('docker run -P publishes the EXPOSEd port, the container has the merged config, and the HEALTHCHECK makes it healthy', async () => {
  const name = `${instance}-web`;
  names.push(name);
  await docker(['run', '-d', '-P', '--name', name, '-e', 'EXTRA=1', image]);
  const port = /:(\d+)$/m.exec(await docker(['port', name, '8080/tcp']))?.[1];
  assert.ok(port, 'docker port names a host port for 8080/tcp');
  const res = await httpGet(`http://127.0.0.1:${port}/`);
  assert.equal(res.status, 200);
  assert.match(res.body, /hello from the image/);

  const config = await inspect<{ Env: string[]; Cmd: string[]; WorkingDir: string; User: string; ExposedPorts: Record<string, object> }>(
    'container',
    name,
    '.Config',
  );
  assert.deepEqual(config.Env.slice(0, 1), ['EXTRA=1']);
  assert.ok(config.Env.includes('GREETING=hello'), config.Env.join(' '));
  assert.deepEqual(config.Cmd, ['httpd', '-f', '-p', '8080']);
  assert.equal(config.WorkingDir, '/www');
  assert.equal(config.User, '65534');
  assert.deepEqual(config.ExposedPorts, { '8080/tcp': {} });

  const pods = JSON.parse(await kubectlOk(['-n', namespace, 'get', 'pods', '-l', `berth.dev/owner=${instance}`, '-o', 'json'])) as {
    items: Array<{ spec: { containers: Array<{ securityContext?: { runAsUser?: number } }>; securityContext?: { runAsUser?: number } } }>;
  };
  const runAs = pods.items.map((p) => p.spec.containers[0].securityContext?.runAsUser ?? p.spec.securityContext?.runAsUser);
  assert.deepEqual(runAs, [65534], "the image's numeric USER reaches the pod");

  // No event tells when a health probe ran: inspect is read until the state settles (probes run every second).
  const health = await eventually(
    'the health state settled',
    async () => {
      const h = await inspect<{ Status: string; Log: unknown[] } | null>('container', name, '.State.Health');
      if (h?.Status === 'starting') throw new Error(`still starting: ${JSON.stringify(h)}`);
      return { h };
    },
    { timeoutMs: 30_000 },
  );
  assert.equal(health.h?.Status, 'healthy', JSON.stringify(health.h));
  // as dockerd: STATUS says it (scripts grep for it), and the change was an event
  assert.match(await docker(['ps', '--filter', `name=${name}`, '--format', '{{.Status}}']), /^Up .* \(healthy\)$/m);
  // the docker CLI sends a duration's instant in whole seconds, and dockerd (as berth) replays events up to it to the
  // nanosecond: `--until 0s` would leave out the events of this second, so the window ends 2 s from now
  const events = await docker(['events', '--since', '10m', '--until=-2s', '--filter', `container=${name}`, '--format', '{{.Action}}']);
  assert.match(events, /^health_status: healthy$/m);
});

test('with the registry gone, a never-looked-up image still pulls and runs, without a config', async () => {
  await registry!.close();
  const name = `${instance}-unread`;
  names.push(name);
  await docker(['run', '-d', '--name', name, unread]);
  await engine!.waitForOutput(/image config of \S+berth-test\/unread:1 not read \(.*ECONNREFUSED/);
  assert.equal(await inspect('container', name, '.State.Running'), true);
  assert.equal(await inspect('container', name, '.Config.ExposedPorts'), null);
  assert.equal(await inspect('container', name, '.State.Health'), null);
  assert.deepEqual(await inspect('image', unread, '.RepoDigests'), []);
});
