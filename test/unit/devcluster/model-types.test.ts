// The dev cluster's table of client-node's models (scripts/model-types.mjs): written by the build, the same as the
// package's own models, so the dev cluster checks bodies without loading the package.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import * as fromPackage from '@kubernetes/client-node';
import { modelAttributes } from '../../../src/devcluster/api/models.js';

const tableFile = fileURLToPath(new URL('../../../src/devcluster/api/model-types.json', import.meta.url));
const packageModels = fromPackage as unknown as Record<string, { attributeTypeMap?: unknown } | undefined>;

test('the build wrote the table (npm run build, not tsc alone)', () => {
  assert.ok(existsSync(tableFile), `${tableFile} is missing: run npm run build (tsc alone skips scripts/model-types.mjs)`);
  const table = JSON.parse(readFileSync(tableFile, 'utf8')) as Record<string, unknown>;
  const withFields = Object.keys(packageModels).filter((name) => Array.isArray(packageModels[name]?.attributeTypeMap));
  assert.deepEqual(Object.keys(table).sort(), withFields.sort(), 'every model of the package, and nothing else');
});

test('every model reads as the package has it: names, types and formats in declared order', () => {
  for (const name of ['V1Pod', 'V1Container', 'V1ObjectMeta', 'CoreV1Event', 'V1Lease', 'V1NetworkPolicySpec', 'V1ResourceRequirements']) {
    const expected = (packageModels[name]!.attributeTypeMap as Array<{ baseName: string; type: string; format: string }>).map(({ baseName, type, format }) => ({ baseName, type, format }));
    assert.deepEqual(modelAttributes(name), expected, name);
  }
  assert.equal(modelAttributes('string'), undefined);
  assert.equal(modelAttributes('toString'), undefined, 'only models, not what every object has');
});
