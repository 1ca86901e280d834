// The installed `kpt fn render` and `kpt fn eval` run container functions through berth's shim (user
// `shim`, exactly the shipped Role) and through a podman-backed `docker`: same output, same exit status,
// the function's stderr in kpt's report, nothing of berth left behind.
import { after, afterEach, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync } from 'node:fs';
import { join } from 'node:path';
import YAML from 'yaml';
import { setUpShim, tempTree, type Runtime, type ShimEnv } from './shim-env.js';

const KPTFILE = `apiVersion: kpt.dev/v1
kind: Kptfile
metadata:
  name: pkg
pipeline:
  mutators:
  - image: localhost/berth/krm-set-annotations:1
    configMap: {owner: kpt-e2e}
  validators:
  - image: localhost/berth/krm-require-label:1
    configMap: {label: team, kinds: Service}
`;
const SERVICE = `apiVersion: v1\nkind: Service\nmetadata:\n  name: cart\n  labels: {team: shop}\nspec:\n  ports: [{port: 80}]\n`;

let shim: ShimEnv;
before(async () => {
  shim = await setUpShim('shim-kpt');
});
after(async () => {
  await shim?.close();
});
afterEach(async () => assert.deepEqual(await shim.leftovers(), [], 'berth left objects behind'));

/** kpt prints paths relative to where it runs: each runtime gets a same-named copy in its own folder. */
async function kptBoth(pkg: Record<string, string>, args: (dir: string) => string[]) {
  const tree = tempTree(Object.fromEntries(Object.entries(pkg).map(([k, v]) => [`src/pkg/${k}`, v])));
  try {
    const results = [];
    for (const runtime of ['podman', 'berth'] as Runtime[]) {
      const dir = join(tree.dir, runtime, 'pkg');
      cpSync(join(tree.dir, 'src/pkg'), dir, { recursive: true });
      results.push(await shim.run(runtime, 'kpt', args(dir)));
    }
    return results as [(typeof results)[0], (typeof results)[0]];
  } finally {
    tree.remove();
  }
}

test('kpt fn render: mutator and validator give the same ResourceList through berth and podman', async () => {
  const [ref, berth] = await kptBoth({ Kptfile: KPTFILE, 'service.yaml': SERVICE }, (dir) => ['fn', 'render', dir, '-o', 'stdout']);
  assert.equal(ref.code, 0, ref.stderr);
  assert.equal(berth.code, 0, berth.stderr);
  assert.equal(berth.stdout, ref.stdout);
  const list = YAML.parse(berth.stdout);
  assert.equal(list.items.find((i: { kind: string }) => i.kind === 'Service').metadata.annotations.owner, 'kpt-e2e');
  assert.match(berth.stderr, /\[PASS\] "localhost\/berth\/krm-require-label:1"/);
});

test('kpt fn render: a failing validator fails the same way, with its stderr and results', async () => {
  const unlabeled = SERVICE.replace('  labels: {team: shop}\n', '');
  const [ref, berth] = await kptBoth({ Kptfile: KPTFILE, 'service.yaml': unlabeled }, (dir) => ['fn', 'render', dir, '-o', 'stdout']);
  assert.notEqual(ref.code, 0);
  assert.equal(berth.code, ref.code);
  assert.equal(berth.stdout, ref.stdout);
  for (const r of [ref, berth]) {
    assert.match(r.stderr, /require-label: 1 item\(s\) without label team/);
    assert.match(r.stderr, /Service cart has no label team/);
  }
});

test("kpt fn eval: exit code 42 and the function stderr in kpt's report", async () => {
  const [ref, berth] = await kptBoth({ Kptfile: KPTFILE, 'service.yaml': SERVICE }, (dir) => [
    'fn',
    'eval',
    dir,
    '-o',
    'stdout',
    '-i',
    'localhost/berth/krm-exit42:1',
  ]);
  assert.notEqual(ref.code, 0);
  assert.equal(berth.code, ref.code);
  assert.equal(berth.stdout, ref.stdout);
  for (const r of [ref, berth]) {
    assert.match(r.stderr, /exit42: failing on purpose with exit code 42/);
    assert.match(r.stderr, /Exit code: 42/);
  }
});

test('kpt fn eval with --mount, -e, key=value config: same output', async () => {
  const files = tempTree({ 'greeting.txt': 'hello from kpt\n' });
  try {
    const [ref, berth] = await kptBoth({ Kptfile: KPTFILE, 'service.yaml': SERVICE }, (dir) => [
      'fn',
      'eval',
      dir,
      '-o',
      'stdout',
      '-i',
      'localhost/berth/krm-probe:1',
      '--mount',
      `type=bind,src=${files.dir},dst=/files`,
      '-e',
      'STAGE=e2e',
      '--',
      'file=/files/greeting.txt',
      'env=STAGE',
    ]);
    assert.equal(ref.code, 0, ref.stderr);
    assert.equal(berth.code, 0, berth.stderr);
    assert.equal(berth.stdout, ref.stdout);
    const probe = YAML.parse(berth.stdout).items.find((i: { metadata: { name: string } }) => i.metadata.name === 'probe');
    assert.deepEqual(
      { fileContent: probe.data.fileContent, fileFolder: probe.data.fileFolder, stage: probe.data['env.STAGE'], uid: probe.data.uid },
      { fileContent: 'hello from kpt\n', fileFolder: 'read-only', stage: 'e2e', uid: '65534' },
    );
  } finally {
    files.remove();
  }
});
