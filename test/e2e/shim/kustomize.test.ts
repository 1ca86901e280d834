// The installed `kubectl kustomize --enable-alpha-plugins` runs container functions through berth's shim
// (as user `shim`, bound to exactly deploy/rbac/shim-role.yaml) and through a podman-backed `docker`:
// same bytes on stdout, same exit status, the function's stderr shown, nothing of berth left behind.
import { after, afterEach, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:net';
import YAML from 'yaml';
import { bothRuntimes, setUpShim, tempTree, type ShimEnv } from './shim-env.js';

const fn = (image: string, extra = '') => `config.kubernetes.io/function: |\n      container:\n        image: localhost/berth/krm-${image}:1${extra}`;
const SERVICE = `apiVersion: v1\nkind: Service\nmetadata:\n  name: cart\n  labels: {team: shop}\nspec:\n  ports: [{port: 80}]\n`;
const UNLABELED = `apiVersion: v1\nkind: Service\nmetadata:\n  name: orphan\nspec:\n  ports: [{port: 81}]\n`;

const fnConfig = (name: string, annotation: string, data: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n  annotations:\n    ${annotation}\ndata: ${data}\n`;

const PIPELINE = {
  'service.yaml': SERVICE,
  'annotate.yaml': fnConfig('annotate', fn('set-annotations'), '{owner: berth-e2e, stage: test}'),
  'generate.yaml': fnConfig('generate', fn('generate-configmap'), '{name: generated-settings, color: blue}'),
  'validate.yaml': fnConfig('validate', fn('require-label'), '{label: team, kinds: Service}'),
  'chatty.yaml': fnConfig('chatty', fn('chatty'), '{}'),
  'kustomization.yaml': 'resources: [service.yaml]\ngenerators: [generate.yaml]\ntransformers: [annotate.yaml, chatty.yaml]\nvalidators: [validate.yaml]\n',
};

let shim: ShimEnv;
let server: Server;
let port = 0;
/** the node's address on the pod bridge: a pod with a network reaches this machine there, one without it does not */
const nodeAddress = '10.244.0.1';
/** where a host-network function finds this machine: loopback, as the node is this machine */
const hostFromHostNetwork = '127.0.0.1';

before(async () => {
  shim = await setUpShim('shim-kustomize');
  server = createServer((s) => s.end());
  await new Promise<void>((resolve) => server.listen(0, '0.0.0.0', resolve));
  port = (server.address() as { port: number }).port;
});
after(async () => {
  server?.close();
  await shim?.close();
});
afterEach(async () => assert.deepEqual(await shim.leftovers(), [], 'berth left objects behind'));

test('transformer, generator and validator: berth prints what podman prints, byte for byte', async () => {
  const tree = tempTree(PIPELINE);
  try {
    const [ref, berth] = await bothRuntimes(shim, 'kubectl', ['kustomize', '--enable-alpha-plugins', tree.dir]);
    assert.equal(ref.code, 0, ref.stderr);
    assert.equal(berth.code, 0, berth.stderr);
    assert.equal(berth.stdout, ref.stdout);
    const docs = YAML.parseAllDocuments(berth.stdout).map((d) => d.toJSON());
    assert.deepEqual(
      docs.map((d) => `${d.kind}/${d.metadata.name}`),
      ['ConfigMap/generated-settings', 'Service/cart'],
    );
    assert.equal(docs[1].metadata.annotations.owner, 'berth-e2e');
    // The function's stderr reaches kustomize's stderr, never its stdout.
    assert.match(berth.stderr, /chatty: this line goes to stderr only/);
    assert.doesNotMatch(berth.stdout, /chatty/);
  } finally {
    tree.remove();
  }
});

test('a failing validator: same exit status, its stderr shown', async () => {
  const tree = tempTree({
    ...PIPELINE,
    'orphan.yaml': UNLABELED,
    'kustomization.yaml': PIPELINE['kustomization.yaml'].replace('[service.yaml]', '[service.yaml, orphan.yaml]'),
  });
  try {
    const [ref, berth] = await bothRuntimes(shim, 'kubectl', ['kustomize', '--enable-alpha-plugins', tree.dir]);
    assert.equal(ref.code, 1);
    assert.equal(berth.code, ref.code);
    assert.equal(berth.stdout, ref.stdout);
    for (const r of [ref, berth]) {
      assert.match(r.stderr, /require-label: 1 item\(s\) without label team/);
      assert.match(r.stderr, /exit status 1/);
    }
  } finally {
    tree.remove();
  }
});

test('a function exiting 42: kustomize reports exit status 42 through both', async () => {
  const tree = tempTree({
    'service.yaml': SERVICE,
    'fail.yaml': fnConfig('fail', fn('exit42'), '{}'),
    'kustomization.yaml': 'resources: [service.yaml]\ntransformers: [fail.yaml]\n',
  });
  try {
    const [ref, berth] = await bothRuntimes(shim, 'kubectl', ['kustomize', '--enable-alpha-plugins', tree.dir]);
    assert.equal(ref.code, 1);
    assert.equal(berth.code, ref.code);
    assert.equal(berth.stdout, ref.stdout);
    for (const r of [ref, berth]) {
      assert.match(r.stderr, /exit42: failing on purpose with exit code 42/);
      assert.match(r.stderr, /exit status 42/);
    }
  } finally {
    tree.remove();
  }
});

function probeTree(extra: string, data: string): ReturnType<typeof tempTree> {
  return tempTree({
    'files/greeting.txt': 'hello from the host\n',
    'probe.yaml': fnConfig('probe-config', fn('probe', extra), data),
    'kustomization.yaml': 'generators: [probe.yaml]\n',
  });
}

function probeResult(stdout: string): Record<string, string> {
  const docs = YAML.parseAllDocuments(stdout).map((d) => d.toJSON());
  const probe = docs.find((d) => d.metadata?.name === 'probe');
  assert.ok(probe, `no probe ConfigMap in ${stdout}`);
  return probe.data;
}

test('sandbox: no network, user nobody, read-only mount, declared env (the --mount/--env defaults)', async () => {
  const tree = probeTree(
    '\n        mounts: [{type: bind, src: ./files, dst: /files}]\n        envs: [REGION=eu, SECRET_TOKEN]',
    `{file: /files/greeting.txt, connect: "${nodeAddress}:${port}", env: "REGION,SECRET_TOKEN,DEBUG"}`,
  );
  try {
    const args = ['kustomize', '--enable-alpha-plugins', '-e', 'DEBUG=1', tree.dir];
    const [ref, berth] = await bothRuntimes(shim, 'kubectl', args, { extraEnv: { SECRET_TOKEN: 's3cret' } });
    assert.equal(ref.code, 0, ref.stderr);
    assert.equal(berth.code, 0, berth.stderr);
    assert.equal(berth.stdout, ref.stdout);
    assert.deepEqual(probeResult(berth.stdout), {
      uid: '65534',
      gid: '65534',
      fileContent: 'hello from the host\n',
      fileFolder: 'read-only',
      connect: 'failed',
      'env.REGION': 'eu',
      'env.SECRET_TOKEN': 's3cret',
      'env.DEBUG': '1',
    });
  } finally {
    tree.remove();
  }
});

test('--network, --mount and --as-current-user: the function reaches the host and reads the extra mount', async () => {
  const tree = probeTree('\n        network: true', `{file: /extra/greeting.txt, connect: "${hostFromHostNetwork}:${port}"}`);
  try {
    const args = ['kustomize', '--enable-alpha-plugins', '--network', '--as-current-user', '--mount', `type=bind,src=${tree.dir}/files,dst=/extra`, tree.dir];
    const [ref, berth] = await bothRuntimes(shim, 'kubectl', args);
    assert.equal(ref.code, 0, ref.stderr);
    assert.equal(berth.code, 0, berth.stderr);
    assert.equal(berth.stdout, ref.stdout);
    const result = probeResult(berth.stdout);
    assert.equal(result.connect, 'connected');
    assert.equal(result.fileContent, 'hello from the host\n');
    assert.equal(result.uid, String(process.getuid?.()));
  } finally {
    tree.remove();
  }
});
