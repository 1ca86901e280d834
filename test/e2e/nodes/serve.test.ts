// berth serve with its containers on another node than berth and than each other: the docker CLI runs, execs, reads
// logs, copies files and reaches a published port of a container on the worker, and containers on different nodes
// reach each other by network alias. Placement is forced with the berth.dev/node-selector label.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BUSYBOX, freshNamespace, kubectlOk } from '../harness/cluster.js';
import { bindServeRole, type DockerEngine, startBerth, stopAndCheckLeftovers } from '../serve/serve-env.js';
import { eventually } from '../../util/eventually.js';

const prefix = `bn${process.pid}`;
const on = (node: string) => ['--label', `berth.dev/node-selector=kubernetes.io/hostname=${node}`];
const WORKER = on('berth-worker');
const FIRST = on('berth');

let engine: DockerEngine;
let namespace = '';
const instance = `${prefix}-nodes`;
const names: string[] = [];
const work = mkdtempSync(join(tmpdir(), 'berth-nodes-serve-'));
const name = (n: string): string => {
  const full = `${prefix}-${n}`;
  names.push(full);
  return full;
};
const ok = (args: string[], input?: string): Promise<string> => engine.dockerOk(args, { input });

/** the node the scheduler put a container's pod on */
async function nodeOf(container: string): Promise<string> {
  const pods = JSON.parse(await kubectlOk(['get', 'pods', '-n', namespace, '-o', 'json'])).items as {
    metadata: { labels?: Record<string, string> };
    spec: { nodeName?: string };
  }[];
  const id = (await ok(['inspect', '-f', '{{.Id}}', container])).trim();
  // berth labels a container's pod with the container's short id
  const pod = pods.find((p) => {
    const short = p.metadata.labels?.['berth.dev/container'];
    return !!short && id.startsWith(short);
  });
  assert.ok(pod, `a pod of container ${container} (${id}) in ${namespace}`);
  return pod.spec.nodeName ?? '';
}

before(async () => {
  namespace = await freshNamespace('nodes-serve');
  await bindServeRole(namespace, 'shim');
  engine = await startBerth(namespace, instance, { user: 'shim' });
  await ok(['pull', BUSYBOX]);
});

after(async () => {
  try {
    for (const n of names) await engine.docker(['rm', '-f', n]);
    await engine.docker(['network', 'rm', `${prefix}-net`]);
  } finally {
    await stopAndCheckLeftovers(engine, namespace, instance, work);
  }
});

test('docker run --rm on the worker: its output and exit code', async () => {
  const r = await engine.docker(['run', '--rm', ...WORKER, BUSYBOX, 'sh', '-c', 'echo from the worker; exit 3']);
  assert.equal(r.code, 3, r.stderr);
  assert.equal(r.stdout, 'from the worker\n');
});

test('a container on the worker: exec, logs, cp both ways and a published port, as on the first node', async () => {
  const c = name('far');
  await ok([
    'run',
    '-d',
    '--name',
    c,
    '-p',
    '127.0.0.1::8080',
    ...WORKER,
    BUSYBOX,
    'sh',
    '-c',
    'echo started; echo served-from-worker > /tmp/index.html; exec httpd -f -p 8080 -h /tmp',
  ]);
  assert.equal(await nodeOf(c), 'berth-worker');
  const exec = await engine.docker(['exec', c, 'sh', '-c', 'echo out; exit 5']);
  assert.equal(exec.code, 5);
  assert.equal(exec.stdout, 'out\n');
  assert.equal(await ok(['logs', c]), 'started\n');
  writeFileSync(join(work, 'in.txt'), 'copied across nodes\n');
  await ok(['cp', join(work, 'in.txt'), `${c}:/tmp/in.txt`]);
  await ok(['cp', `${c}:/tmp/in.txt`, join(work, 'back.txt')]);
  assert.equal(readFileSync(join(work, 'back.txt'), 'utf8'), 'copied across nodes\n');
  const port = (await ok(['inspect', '-f', '{{(index (index .NetworkSettings.Ports "8080/tcp") 0).HostPort}}', c])).trim();
  const body = await eventually(
    'httpd on the worker serves the page',
    async () => {
      const b = await fetch(`http://127.0.0.1:${port}/index.html`).then(
        (r) => r.text(),
        () => '',
      );
      return b === 'served-from-worker\n' && b;
    },
    { timeoutMs: 10_000 },
  );
  assert.equal(body, 'served-from-worker\n');
});

test('containers on different nodes reach each other by network alias, both ways', async () => {
  const net = `${prefix}-net`;
  await ok(['network', 'create', net]);
  const web = name('web');
  const peer = name('peer');
  await ok([
    'run',
    '-d',
    '--name',
    web,
    '--network',
    net,
    '--network-alias',
    'nearweb',
    ...FIRST,
    BUSYBOX,
    'sh',
    '-c',
    'echo near > /tmp/index.html; exec httpd -f -p 8080 -h /tmp',
  ]);
  await ok([
    'run',
    '-d',
    '--name',
    peer,
    '--network',
    net,
    '--network-alias',
    'farweb',
    ...WORKER,
    BUSYBOX,
    'sh',
    '-c',
    'echo far > /tmp/index.html; exec httpd -f -p 8080 -h /tmp',
  ]);
  assert.deepEqual([await nodeOf(web), await nodeOf(peer)], ['berth', 'berth-worker']);
  const get = (from: string, url: string) =>
    engine.docker(['exec', from, 'sh', '-c', `for i in $(seq 1 20); do wget -q -O - ${url} && exit 0; sleep 0.5; done; exit 1`]);
  const there = await get(peer, 'http://nearweb:8080/index.html');
  assert.equal(there.stdout, 'near\n', there.stderr);
  const back = await get(web, 'http://farweb:8080/index.html');
  assert.equal(back.stdout, 'far\n', back.stderr);
});

process.on('exit', () => rmSync(work, { recursive: true, force: true }));
