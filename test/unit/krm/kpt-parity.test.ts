// berth fn render/eval against the installed kpt on the same packages, with local exec functions (no
// cluster): Kptfile `selectors`/`exclude`, eval's --match-*/--exclude-* flags, and --results-dir.
// The resources must be the same data (berth keeps flow style where kpt reflows it) and results.yaml
// the same text.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { evalFunction } from '../../../src/krm/eval.js';
import { renderPackage } from '../../../src/krm/render.js';
import { dataOf, functionScripts, tree } from './fn-scripts.js';
import { scratchDir } from '../../util/scratch.js';

const kptMissing = spawnSync('kpt', ['version'], { encoding: 'utf8' }).error ? 'kpt is not installed' : false;

const RESOURCES = `apiVersion: v1
kind: Service
metadata:
  name: cart
  labels: {team: shop}
---
apiVersion: v1
kind: Service
metadata:
  name: skip-me
  labels: {team: shop}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: db
  namespace: prod
  labels: {tier: db}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: other
`;

interface Side {
  dir: string;
  results: string;
  code: number;
  log: string;
}

/** The same package twice, side by side: kpt renders (or evals) one, berth the other. */
async function both(
  kptfile: string | undefined,
  kptArgs: (dir: string, results: string) => string[],
  berth: (dir: string, results: string, report: PassThrough) => Promise<unknown>,
): Promise<{ kpt: Side; berth: Side; cleanup(): void }> {
  const work = scratchDir('berth-parity-');
  const src = tree({ ...(kptfile ? { Kptfile: kptfile } : {}), 'resources.yaml': RESOURCES });
  const side = (name: string) => ({ dir: path.join(work, name), results: path.join(work, `${name}-results`) });
  const k = side('kpt');
  const b = side('berth');
  cpSync(src, k.dir, { recursive: true });
  cpSync(src, b.dir, { recursive: true });
  rmSync(src, { recursive: true, force: true });
  const run = spawnSync('kpt', kptArgs(k.dir, k.results), { encoding: 'utf8' });
  const report = new PassThrough();
  let log = '';
  report.on('data', (c: Buffer) => (log += c.toString()));
  let code = 0;
  try {
    await berth(b.dir, b.results, report);
  } catch {
    code = 1;
  }
  return {
    kpt: { ...k, code: run.status ?? -1, log: run.stderr },
    berth: { ...b, code, log },
    cleanup: () => rmSync(work, { recursive: true, force: true }),
  };
}

const resultsOf = (s: Side): string => readFileSync(path.join(s.results, 'results.yaml'), 'utf8');
const noCatalogs = { trusted: [], untrusted: [], unreadable: [] };

test('render with selectors and exclude: same resources and results.yaml as kpt', { skip: kptMissing }, async () => {
  const fns = functionScripts(['set-annotations', 'generate-configmap', 'require-label']);
  const kptfile = `apiVersion: kpt.dev/v1
kind: Kptfile
metadata:
  name: pkg
pipeline:
  mutators:
  - exec: ${fns.path['set-annotations']}
    configMap: {owner: team-a}
    selectors:
    - kind: Service
    - labels: {tier: db}
    exclude:
    - name: skip-me
  - exec: ${fns.path['generate-configmap']}
    configMap: {name: gen, k: v}
    selectors:
    - kind: Deployment
  validators:
  - exec: ${fns.path['require-label']}
    configMap: {label: team}
    selectors:
    - kind: Service
`;
  const r = await both(
    kptfile,
    (dir, results) => ['fn', 'render', dir, '--allow-exec', '--results-dir', results],
    (dir, results, report) => renderPackage(dir, { catalogs: noCatalogs, report, resultsDir: results }),
  );
  try {
    assert.equal(r.kpt.code, 0, r.kpt.log);
    assert.equal(r.berth.code, 0, r.berth.log);
    const data = dataOf(r.berth.dir);
    assert.deepEqual(data, dataOf(r.kpt.dir));
    // Not vacuous: the selected ones changed, the excluded and unselected ones did not, and the
    // generator that selected nothing still ran (its ConfigMap is there).
    const annotated = (data['resources.yaml'] as Array<{ metadata: { name: string; annotations?: Record<string, string> } }>)
      .filter((i) => i.metadata.annotations?.owner)
      .map((i) => i.metadata.name);
    assert.deepEqual(annotated, ['cart', 'db']);
    assert.ok(data['configmap_gen.yaml']);
    assert.equal(resultsOf(r.berth), resultsOf(r.kpt));
    assert.match(r.berth.log, /\[RUNNING\] ".*set-annotations.sh" on 2 resource\(s\)/);
    assert.match(r.berth.log, /\[RUNNING\] ".*generate-configmap.sh" on 0 resource\(s\)/);
  } finally {
    r.cleanup();
    rmSync(fns.dir, { recursive: true, force: true });
  }
});

test('render with exclude only and a failing validator: nothing written, same results.yaml as kpt', { skip: kptMissing }, async () => {
  const fns = functionScripts(['set-annotations', 'require-label']);
  const kptfile = `apiVersion: kpt.dev/v1
kind: Kptfile
metadata:
  name: pkg
pipeline:
  mutators:
  - exec: ${fns.path['set-annotations']}
    configMap: {owner: team-a}
    exclude:
    - kind: Kptfile
    - namespace: prod
  validators:
  - exec: ${fns.path['require-label']}
    configMap: {label: team}
    exclude:
    - kind: Kptfile
`;
  const r = await both(
    kptfile,
    (dir, results) => ['fn', 'render', dir, '--allow-exec', '--results-dir', results],
    (dir, results, report) => renderPackage(dir, { catalogs: noCatalogs, report, resultsDir: results }),
  );
  try {
    assert.equal(r.kpt.code, 1, r.kpt.log);
    assert.equal(r.berth.code, 1, r.berth.log);
    assert.deepEqual(dataOf(r.berth.dir), dataOf(r.kpt.dir));
    assert.equal(readFileSync(path.join(r.berth.dir, 'resources.yaml'), 'utf8'), RESOURCES);
    const results = resultsOf(r.berth);
    assert.equal(results, resultsOf(r.kpt));
    // The validator saw 4 resources (the Kptfile excluded) and reported the two ConfigMaps.
    assert.match(results, /exitCode: 1\n {4}results:\n {6}- message: ConfigMap db has no label team/);
    assert.match(r.berth.log, /\[RUNNING\] ".*set-annotations.sh" on 3 resource\(s\)/);
    assert.match(r.berth.log, /\[RUNNING\] ".*require-label.sh" on 4 resource\(s\)/);
  } finally {
    r.cleanup();
    rmSync(fns.dir, { recursive: true, force: true });
  }
});

test('eval --match-kind/--match-labels/--exclude-namespace: same resources and results.yaml as kpt', { skip: kptMissing }, async () => {
  const fns = functionScripts(['set-annotations', 'chatty']);
  const cases: Array<{ flags: string[]; selection: Parameters<typeof evalFunction>[1]['selection']; fn: string; args: string[] }> = [
    {
      fn: 'set-annotations',
      flags: ['--match-kind', 'ConfigMap', '--match-labels', 'tier=db'],
      selection: { selectors: [{ kind: 'ConfigMap', labels: { tier: 'db' } }], exclusions: [] },
      args: ['stage=dev'],
    },
    // chatty writes stderr on success: results.yaml keeps it.
    {
      fn: 'chatty',
      flags: ['--match-kind', 'ConfigMap', '--exclude-namespace', 'prod'],
      selection: { selectors: [{ kind: 'ConfigMap' }], exclusions: [{ namespace: 'prod' }] },
      args: [],
    },
  ];
  for (const c of cases) {
    const r = await both(
      undefined,
      (dir, results) => ['fn', 'eval', dir, '--exec', fns.path[c.fn], ...c.flags, '--results-dir', results, ...(c.args.length ? ['--', ...c.args] : [])],
      (dir, results, report) =>
        evalFunction(dir, {
          catalogs: noCatalogs,
          report,
          stdin: new PassThrough(),
          stdout: new PassThrough(),
          exec: fns.path[c.fn],
          keyValues: c.args,
          selection: c.selection,
          resultsDir: results,
        }),
    );
    try {
      assert.equal(r.kpt.code, 0, r.kpt.log);
      assert.equal(r.berth.code, 0, r.berth.log);
      assert.deepEqual(dataOf(r.berth.dir), dataOf(r.kpt.dir));
      assert.equal(resultsOf(r.berth), resultsOf(r.kpt));
      assert.match(r.berth.log, /on 1 resource\(s\)/);
      const stamped = (dataOf(r.berth.dir)['resources.yaml'] as Array<{ metadata: { name: string; annotations?: Record<string, string> } }>)
        .filter((i) => i.metadata.annotations?.stage)
        .map((i) => i.metadata.name);
      assert.deepEqual(stamped, c.args.length ? ['db'] : []);
    } finally {
      r.cleanup();
    }
  }
  rmSync(fns.dir, { recursive: true, force: true });
});
