// Never a wrong success: a function that exits 0 but prints something other than one whole ResourceList
// fails `fn eval` and `fn render` (API and CLI) naming the function and showing what it printed, and
// leaves every byte of the package as it was.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { evalFunction } from '../../../src/krm/eval.js';
import { FunctionOutputError, checkFunctionOutput } from '../../../src/krm/function-output.js';
import { FunctionFailure } from '../../../src/krm/invoke.js';
import { renderPackage } from '../../../src/krm/render.js';
import { tree } from './fn-scripts.js';
import { hashTree, printingFunction } from './package-tree.js';

const berth = fileURLToPath(new URL('../../../src/cli/main.js', import.meta.url));
const NO_CATALOGS = { trusted: [], untrusted: [], unreadable: [] };

const SERVICE = `# the cart service
apiVersion: v1
kind: Service
metadata:
  name: cart
spec:
  ports:
  - port: 80 # http
`;
const DEPLOY = 'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: cart\nspec:\n  replicas: 2\n';

function pkg(fn: string): string {
  return tree({
    Kptfile: `apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: shop\npipeline:\n  mutators:\n  - exec: ${fn}\n`,
    'service.yaml': SERVICE,
    'apps/deploy.yaml': DEPLOY,
    'README.md': 'not a resource\n',
  });
}

/** A whole, valid output for the package above, cut mid-line (as a lost stream would cut it). */
const WHOLE = `apiVersion: config.kubernetes.io/v1
kind: ResourceList
items:
- apiVersion: v1
  kind: Service
  metadata:
    name: cart
    annotations:
      internal.config.kubernetes.io/path: service.yaml
  spec:
    ports:
    - port: 80
- apiVersion: apps/v1
  kind: Deployment
  metadata:
    name: cart
    annotations:
      internal.config.kubernetes.io/path: apps/deploy.yaml
`;

const BAD_OUTPUTS: Array<{ name: string; output: string; reason: RegExp }> = [
  { name: 'empty', output: '', reason: /printed nothing/ },
  { name: 'only whitespace', output: '\n  \n', reason: /printed nothing/ },
  { name: 'garbage', output: 'panic: runtime error\x00\x1b[31m: {[ oops\n', reason: /invalid YAML/ },
  { name: 'a plain word', output: 'Killed\n', reason: /YAML string, not a ResourceList/ },
  { name: 'a non-ResourceList kind', output: 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n', reason: /kind "ConfigMap", not a ResourceList/ },
  {
    name: 'an unknown ResourceList apiVersion',
    output: 'apiVersion: example.org/v9\nkind: ResourceList\nitems: []\n',
    reason: /apiVersion "example\.org\/v9"/,
  },
  { name: 'items missing', output: 'apiVersion: config.kubernetes.io/v1\nkind: ResourceList\n', reason: /without items/ },
  { name: 'items not a list', output: 'apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: {a: 1}\n', reason: /items is a object, not a list/ },
  {
    name: 'items: with nothing after it',
    output: 'apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n',
    reason: /items is empty \(null\), not a list/,
  },
  {
    name: 'an item without metadata.name',
    output: 'apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- apiVersion: v1\n  kind: Service\n  metadata: {labels: {a: b}}\n',
    reason: /items\[0\] \(v1 Service\) has no metadata\.name/,
  },
  {
    name: 'an item without kind',
    output: 'apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- apiVersion: v1\n  metadata: {name: x}\n',
    reason: /items\[0\] has no kind/,
  },
  { name: 'truncated YAML (cut inside an item)', output: WHOLE.slice(0, WHOLE.indexOf('  kind: Deployment') + 8), reason: /items\[1\]|ends mid-line/ },
  { name: 'truncated YAML (cut mid-value)', output: WHOLE.slice(0, -10), reason: /ends mid-line/ },
  {
    name: 'truncated flow YAML',
    output: '{"apiVersion": "config.kubernetes.io/v1", "kind": "ResourceList", "items": [{"apiVersion": "v1", "ki',
    reason: /invalid YAML/,
  },
  { name: 'two documents', output: `${WHOLE}---\n${WHOLE}`, reason: /2 YAML documents, not one ResourceList/ },
  { name: 'a bare multi-document stream', output: `${SERVICE}---\n${DEPLOY}`, reason: /2 YAML documents/ },
];

function capture(): { stream: PassThrough; text(): string } {
  const stream = new PassThrough();
  let text = '';
  stream.on('data', (c: Buffer) => (text += c.toString()));
  return { stream, text: () => text };
}

async function expectRefused(run: () => Promise<unknown>, fn: string, reason: RegExp): Promise<void> {
  await assert.rejects(run, (err: unknown) => {
    assert.ok(err instanceof FunctionFailure, String(err));
    assert.equal(err.exitCode, 1);
    assert.ok(err.message.includes(`function ${fn} exited 0 but`), err.message);
    assert.match(err.message, reason);
    assert.match(err.message, /the package is as it was/);
    return true;
  });
}

for (const bad of BAD_OUTPUTS) {
  test(`fn eval and fn render refuse output that is ${bad.name}; the package is byte-identical`, async () => {
    const fn = printingFunction(bad.output);
    const dir = pkg(fn);
    const before = hashTree(dir);
    const report = capture();
    await expectRefused(
      () => evalFunction(dir, { catalogs: NO_CATALOGS, exec: fn, report: report.stream, stdin: new PassThrough(), stdout: new PassThrough() }),
      fn,
      bad.reason,
    );
    assert.match(report.text(), /\[FAIL\]/);
    assert.doesNotMatch(report.text(), /\[PASS\]/);
    assert.deepEqual(hashTree(dir), before);
    await expectRefused(() => renderPackage(dir, { catalogs: NO_CATALOGS, report: capture().stream }), fn, bad.reason);
    assert.deepEqual(hashTree(dir), before);
  });
}

test('the error shows the first 200 bytes of the output, escaped, and says there was more', async () => {
  const output = `${'x'.repeat(150)}\x07\n${'y'.repeat(300)}: [`;
  assert.throws(
    () => checkFunctionOutput(output, '/fns/bad.sh'),
    (err: unknown) => {
      assert.ok(err instanceof FunctionOutputError);
      assert.ok(err.message.startsWith('function /fns/bad.sh exited 0 but printed invalid YAML'), err.message);
      assert.ok(err.message.includes(`printed ${Buffer.byteLength(output)} byte(s): ${JSON.stringify(output.slice(0, 200))} ...`), err.message);
      assert.ok(err.message.includes('\\u0007\\n'), 'control characters are escaped');
      return true;
    },
  );
});

test('berth fn eval / fn render (CLI): exit 1, the function and its output named, nothing written', () => {
  for (const bad of [BAD_OUTPUTS[0], BAD_OUTPUTS[2], BAD_OUTPUTS[12]]) {
    const fn = printingFunction(bad.output);
    const dir = pkg(fn);
    const before = hashTree(dir);
    for (const args of [
      ['fn', 'eval', dir, '--exec', fn],
      ['fn', 'render', dir],
    ]) {
      const r = spawnSync(process.execPath, [berth, ...args], { encoding: 'utf8', env: { ...process.env, BERTH_CONFIG: '/nonexistent/berth.yaml' } });
      assert.equal(r.status, 1, `${args.join(' ')}: ${r.stderr}`);
      assert.ok(r.stderr.includes(`berth: function ${fn} exited 0 but`), r.stderr);
      assert.match(r.stderr, bad.reason);
      assert.doesNotMatch(r.stderr, /\[PASS\]|Successfully/);
      assert.deepEqual(hashTree(dir), before, `${args.join(' ')} changed the package`);
    }
  }
});

test('a function that exits non-zero still fails with its own exit code, whatever it printed', async () => {
  const fn = printingFunction(WHOLE, 3);
  const dir = pkg(fn);
  const before = hashTree(dir);
  await assert.rejects(
    evalFunction(dir, { catalogs: NO_CATALOGS, exec: fn, report: capture().stream, stdin: new PassThrough(), stdout: new PassThrough() }),
    (err: unknown) => err instanceof FunctionFailure && err.exitCode === 3,
  );
  assert.deepEqual(hashTree(dir), before);
});

test('accepted: every ResourceList apiVersion kpt reads, items: [] (the function removes everything, as kpt allows), JSON, a nameless Kustomization', () => {
  for (const v of ['v1', 'v1beta1', 'v1alpha1'])
    assert.equal(checkFunctionOutput(`apiVersion: config.kubernetes.io/${v}\nkind: ResourceList\nitems: []\n`, 'f').items.length, 0);
  const json = checkFunctionOutput(
    '{"apiVersion":"config.kubernetes.io/v1","kind":"ResourceList","items":[{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}}]}',
    'f',
  );
  assert.equal(json.items.length, 1);
  const kustomization = checkFunctionOutput(
    'apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- apiVersion: kustomize.config.k8s.io/v1beta1\n  kind: Kustomization\n  resources: [a.yaml]\n',
    'f',
  );
  assert.equal(kustomization.items[0].kind, 'Kustomization');
  const withResults = checkFunctionOutput(
    'apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\nresults:\n- {message: hi, severity: info}\n',
    'f',
  );
  assert.deepEqual(withResults.results, [{ message: 'hi', severity: 'info' }]);
});

test('items: [] through fn eval removes the resource files and nothing else', async () => {
  const fn = printingFunction('apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\n');
  const dir = tree({ 'service.yaml': SERVICE, 'apps/deploy.yaml': DEPLOY, 'README.md': 'kept\n' });
  await evalFunction(dir, { catalogs: NO_CATALOGS, exec: fn, report: capture().stream, stdin: new PassThrough(), stdout: new PassThrough() });
  assert.deepEqual(Object.keys(hashTree(dir)), ['README.md', 'apps']);
});
