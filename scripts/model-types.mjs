// Writes dist/src/devcluster/api/model-types.json: the field names and types of every model of
// @kubernetes/client-node (its generated attributeTypeMap), which the dev cluster checks request bodies
// against and builds its OpenAPI schemas from. Loading the package for them held its 826 modules, about 25 MB of
// source text, in the dev cluster's heap, where every full collection marked them again. Without this file
// the dev cluster loads the package (api/models.ts): it works the same, with a larger heap.
import { existsSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dir = join(root, 'dist/src/devcluster/api');
if (!existsSync(dir)) {
  console.error(`model-types: ${dir} is missing: run tsc first`);
  process.exit(1);
}
const models = await import('@kubernetes/client-node');
const table = {};
for (const [name, value] of Object.entries(models)) {
  const attributes = value?.attributeTypeMap;
  if (Array.isArray(attributes)) table[name] = attributes.map((a) => [a.baseName, a.type, a.format]);
}
writeFileSync(join(dir, 'model-types.json'), JSON.stringify(table));
