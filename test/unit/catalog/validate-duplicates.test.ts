// `berth catalog validate A B`: a kind several catalogs provide is named, with the catalog that wins
// when they are trusted in that order (KEP-2906: first match wins).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { scratchDir } from '../../util/scratch.js';

const berth = fileURLToPath(new URL('../../../src/cli/main.js', import.meta.url));

function catalog(name: string, kinds: Array<[string, string]>): string {
  const fns = kinds
    .map(
      ([kind, version]) =>
        `  - group: fn.example.org\n    names: {kind: ${kind}}\n    description: d\n    publisher: p\n    versions:\n    - name: ${version}\n      runtime:\n        container: {image: "example.org/${kind.toLowerCase()}:1"}\n`,
    )
    .join('');
  return `apiVersion: config.kubernetes.io/v1alpha1\nkind: Catalog\nmetadata: {name: ${name}}\nspec:\n  krmFunctions:\n${fns}`;
}

test('catalog validate warns about each kind given by several catalogs, naming the winner; unique kinds and other versions pass quietly', async () => {
  const dir = scratchDir('berth-dup-');
  const a = path.join(dir, 'a.yaml');
  const b = path.join(dir, 'b.yaml');
  const c = path.join(dir, 'c.yaml');
  writeFileSync(
    a,
    catalog('team-a', [
      ['SetTeam', 'v1'],
      ['OnlyA', 'v1'],
    ]),
  );
  writeFileSync(
    b,
    catalog('team-b', [
      ['SetTeam', 'v1'],
      ['SetTeam2', 'v1'],
    ]),
  );
  writeFileSync(
    c,
    catalog('team-c', [
      ['SetTeam', 'v2'],
      ['SetTeam', 'v1'],
    ]),
  );
  const r = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) =>
    execFile(process.execPath, [berth, 'catalog', 'validate', b, a, c], (err, stdout, stderr) => resolve({ code: err ? Number(err.code) : 0, stdout, stderr })),
  );
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout.split('\n').filter((l) => l.includes(': valid')).length, 3);
  assert.deepEqual(r.stderr.trim().split('\n'), [
    `warning: SetTeam fn.example.org/v1 is provided by ${b} (catalog team-b) and ${a} (catalog team-a) and ${c} (catalog team-c): trusted in this order, ${b} (catalog team-b) wins`,
  ]);
});
