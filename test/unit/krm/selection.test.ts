// Pure parts of function selection (Kptfile selectors/exclude, eval's --match-*/--exclude-*) and of
// --results-dir's FunctionResultList.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { selectionFromFlags } from '../../../src/cli/fn.js';
import type { KrmObject } from '../../../src/krm/package.js';
import { buildResultList, serializeResultList, withResultsDir } from '../../../src/krm/results.js';
import {
  ANN_SELECTION_ID,
  isEmptySelector,
  matchesSelector,
  mergeSelectionOutput,
  parseSelectorList,
  selectResources,
  tagSelected,
} from '../../../src/krm/selection.js';
import { scratchDir } from '../../util/scratch.js';

const svc: KrmObject = {
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name: 'cart', namespace: 'shop', labels: { team: 'shop', tier: 'web' }, annotations: { owner: 'a' } } as KrmObject['metadata'],
};
const deploy: KrmObject = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'cart', namespace: 'shop', labels: { team: 'shop' } } as KrmObject['metadata'],
};
const cm: KrmObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings' } };
const all = [svc, deploy, cm];

test('matchesSelector: every given field must match; labels and annotations are subsets', () => {
  assert.equal(matchesSelector(svc, {}), true);
  assert.equal(matchesSelector(svc, { kind: 'Service', name: 'cart', namespace: 'shop', apiVersion: 'v1' }), true);
  assert.equal(matchesSelector(svc, { kind: 'Service', name: 'other' }), false);
  assert.equal(matchesSelector(deploy, { apiVersion: 'v1' }), false, 'apiVersion is compared whole, not by group');
  assert.equal(matchesSelector(svc, { labels: { team: 'shop' } }), true);
  assert.equal(matchesSelector(svc, { labels: { team: 'shop', tier: 'db' } }), false);
  assert.equal(matchesSelector(cm, { labels: { team: 'shop' } }), false, 'no labels at all');
  assert.equal(matchesSelector(svc, { annotations: { owner: 'a' } }), true);
  assert.equal(matchesSelector(svc, { annotations: { owner: 'b' } }), false);
  assert.equal(matchesSelector(cm, { namespace: 'default' }), false, 'no namespace is not "default"');
});

test('selectResources: ANY selector, then no non-empty exclusion; order kept, each resource once', () => {
  assert.deepEqual(selectResources(all, { selectors: [], exclusions: [] }), all);
  assert.deepEqual(selectResources(all, { selectors: [{ kind: 'ConfigMap' }, { labels: { team: 'shop' } }], exclusions: [] }), [svc, deploy, cm]);
  // Both selectors match svc: it still goes to the function once.
  assert.deepEqual(selectResources(all, { selectors: [{ kind: 'Service' }, { name: 'cart' }], exclusions: [] }), [svc, deploy]);
  assert.deepEqual(selectResources(all, { selectors: [{ name: 'cart' }], exclusions: [{ kind: 'Deployment' }] }), [svc]);
  assert.deepEqual(selectResources(all, { selectors: [], exclusions: [{ namespace: 'shop' }] }), [cm]);
  // An exclusion with every criterion given must match on all of them.
  assert.deepEqual(selectResources(all, { selectors: [], exclusions: [{ kind: 'Service', name: 'settings' }] }), all);
  // An empty exclusion excludes nothing (it would otherwise match everything).
  assert.deepEqual(selectResources(all, { selectors: [], exclusions: [{}] }), all);
  assert.equal(isEmptySelector({ labels: {} }), true);
  assert.equal(isEmptySelector({ labels: { a: 'b' } }), false);
});

test('mergeSelectionOutput: changed ones replaced in place, deleted ones gone, new ones last, others untouched, tags removed', () => {
  const a: KrmObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a' } };
  const b: KrmObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'b' } };
  const c: KrmObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', annotations: { keep: 'me' } } };
  const d: KrmObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'd' } };
  const items = [a, b, c, d];
  const selected = [a, b, d];
  const sent = tagSelected(items, selected);
  assert.deepEqual(
    sent.map((i) => i.metadata?.annotations?.[ANN_SELECTION_ID]),
    ['0', '1', '3'],
  );
  assert.equal(a.metadata?.annotations, undefined, "the caller's resources are not tagged");
  // The function changes a (and renames it: identity is the tag, not the name), deletes b, keeps d, adds e.
  const out = structuredClone(sent);
  out[0].metadata!.name = 'a2';
  const e: KrmObject = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'e' } };
  const merged = mergeSelectionOutput(items, selected, [e, out[2], out[0]]);
  assert.deepEqual(
    merged.map((i) => i.metadata?.name),
    ['a2', 'c', 'd', 'e'],
  );
  assert.equal(merged[1], c, 'an unselected resource is the same object');
  for (const m of merged) assert.equal(m.metadata?.annotations?.[ANN_SELECTION_ID], undefined);
  assert.equal(merged[0].metadata?.annotations, undefined, 'an annotations map that only held the tag goes');
});

test('parseSelectorList: a Kptfile selector with a wrong shape or an unknown field is an error', () => {
  assert.deepEqual(parseSelectorList(undefined, 'w'), []);
  assert.deepEqual(parseSelectorList([{ kind: 'Service', labels: { n: 1 } }], 'w'), [{ kind: 'Service', labels: { n: '1' } }]);
  assert.throws(
    () => parseSelectorList({ kind: 'Service' }, 'Kptfile: pipeline.mutators[0].selectors'),
    /Kptfile: pipeline.mutators\[0\].selectors: must be a list/,
  );
  assert.throws(() => parseSelectorList([{ kinds: 'Service' }], 'w'), /w\[0\]: unknown field kinds/);
  assert.throws(() => parseSelectorList([{ name: 3 }], 'w'), /w\[0\].name: must be a string/);
  assert.throws(() => parseSelectorList([{ labels: 'a=b' }], 'w'), /w\[0\].labels: must be a mapping/);
});

test('eval flags: --match-* make one selector, --exclude-* one exclusion; none given, none made', () => {
  assert.deepEqual(selectionFromFlags({}), { selectors: [], exclusions: [] });
  assert.deepEqual(
    selectionFromFlags({ matchKind: 'Service', matchLabels: ['team=shop', 'x=a=b'], excludeNamespace: 'prod', excludeAnnotations: ['skip=true'] }),
    {
      selectors: [{ kind: 'Service', labels: { team: 'shop', x: 'a=b' } }],
      exclusions: [{ namespace: 'prod', annotations: { skip: 'true' } }],
    },
  );
  assert.throws(() => selectionFromFlags({ matchLabels: ['team'] }), /--match-labels team: expected key=value/);
});

test("results list: kpt's FunctionResultList text, empty fields left out", () => {
  const list = buildResultList(
    [
      { exec: '/fns/set.sh', exitCode: 0 },
      {
        image: 'example.org/check:1',
        stderr: 'two bad\n',
        exitCode: 1,
        results: [
          {
            message: 'no label',
            severity: 'error',
            resourceRef: { apiVersion: 'v1', kind: 'Service', name: 'cart', namespace: undefined },
            field: { path: 'metadata.labels.team' },
          },
          { message: 'fyi' },
        ],
      },
    ],
    true,
  );
  assert.equal(
    serializeResultList(list),
    `apiVersion: kpt.dev/v1
kind: FunctionResultList
metadata:
  name: fnresults
exitCode: 1
items:
  - exec: /fns/set.sh
    exitCode: 0
  - image: example.org/check:1
    stderr: |
      two bad
    exitCode: 1
    results:
      - message: no label
        severity: error
        resourceRef:
          apiVersion: v1
          kind: Service
          name: cart
        field:
          path: metadata.labels.team
      - message: fyi
`,
  );
  assert.equal(
    serializeResultList(buildResultList([], false)),
    'apiVersion: kpt.dev/v1\nkind: FunctionResultList\nmetadata:\n  name: fnresults\nexitCode: 0\n',
  );
});

test('withResultsDir: written (exitCode 1) when the work fails, the error passed on; nothing written without a dir', async () => {
  const base = scratchDir('berth-results-');
  const dir = path.join(base, 'nested', 'out');
  try {
    const report = new PassThrough();
    await assert.rejects(
      withResultsDir(dir, report, async (records) => {
        records.push({ exec: '/f', exitCode: 3 });
        throw new Error('step failed');
      }),
      /step failed/,
    );
    const text = readFileSync(path.join(dir, 'results.yaml'), 'utf8');
    assert.match(text, /^exitCode: 1$/m);
    assert.match(text, /- exec: \/f\n {4}exitCode: 3\n/);
    assert.match(String(report.read()), /For complete results, see .*results\.yaml/);
    assert.equal(await withResultsDir(undefined, report, async (records) => records.length), 0);
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
});
