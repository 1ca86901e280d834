/**
 * The layers of docs/layout.md as an ESLint rule: every import in src/ is resolved to the folder it
 * lands in and checked against what that folder may depend on. Written as a rule (not a
 * no-restricted-imports pattern list) because the import strings are relative: `../krm/x.js` means a
 * different folder depending on where the importing file sits.
 *
 *   cli ──> shim, krm, catalog, dockerapi, task ──> runtime ──> kube ──> @kubernetes/client-node
 *                   catalog, dockerapi ──> registry
 *   devcluster: stands alone
 *
 * Type-only imports of @kubernetes/client-node are allowed everywhere (they are erased at build); its
 * values (API classes, Watch, KubeConfig as a constructor) only in src/kube, through src/kube/client-node.ts
 * (the build bundles what that module exports: scripts/bundle-client-node.mjs). src/devcluster is outside
 * berth's layers: it is a cluster, not a client of one, and only berth's own code is barred from it
 * (it reads client-node's generated models as its list of known fields: api/known-fields.ts).
 */
import path from 'node:path';

const FACES = ['shim', 'krm', 'catalog', 'dockerapi', 'task'];

/** What each top-level folder of src/ may import besides itself. `*` is anything. */
const ALLOWED = {
  cli: ['*'],
  ...Object.fromEntries(FACES.map((face) => [face, ['runtime', 'kube', 'registry', 'files']])),
  runtime: ['kube', 'files'],
  files: [],
  kube: [],
  registry: [],
  devcluster: [],
};

const CLIENT_NODE = '@kubernetes/client-node';

/** The top-level folder of src/ a path lies in, or undefined outside src/. */
function layerOf(file, srcRoot) {
  const rel = path.relative(srcRoot, file);
  if (rel.startsWith('..') || path.isAbsolute(rel)) return undefined;
  const [first, ...rest] = rel.split(path.sep);
  return rest.length > 0 ? first : undefined;
}

/** An import whose every binding is a type (`import type`, or `import { type A }`) is erased. */
function isTypeOnly(node) {
  if (node.importKind === 'type' || node.exportKind === 'type') return true;
  const specifiers = node.specifiers ?? [];
  return specifiers.length > 0 && specifiers.every((s) => s.importKind === 'type' || s.exportKind === 'type');
}

const layers = {
  meta: {
    type: 'problem',
    docs: { description: "berth's layers: faces do not import each other, only src/kube imports client-node values, devcluster stands alone" },
    schema: [],
    messages: {
      clientNode: 'only src/kube imports @kubernetes/client-node at runtime (use `import type` here, or a src/kube interface)',
      clientNodeDoor: "src/kube takes client-node's values from ./client-node.js (add the name there; the build bundles what it exports)",
      layer: 'src/{{from}} may not import src/{{to}} (layers: docs/layout.md){{hint}}',
      devcluster: 'src/devcluster stands alone: it may not import berth code outside src/devcluster ({{to}})',
    },
  },
  create(context) {
    const file = context.filename;
    const srcRoot = path.join(context.cwd, 'src');
    const from = layerOf(file, srcRoot);
    if (!from) return {};
    const check = (node, source, typeOnly) => {
      if (typeof source !== 'string') return;
      if (source === CLIENT_NODE || source.startsWith(`${CLIENT_NODE}/`)) {
        if (!typeOnly && from !== 'kube' && from !== 'devcluster') context.report({ node, messageId: 'clientNode' });
        else if (!typeOnly && from === 'kube' && path.basename(file) !== 'client-node.ts') context.report({ node, messageId: 'clientNodeDoor' });
        return;
      }
      if (!source.startsWith('.')) return;
      const to = layerOf(path.resolve(path.dirname(file), source), srcRoot);
      if (!to || to === from) return;
      if (from === 'devcluster') {
        context.report({ node, messageId: 'devcluster', data: { to: `src/${to}` } });
        return;
      }
      const allowed = ALLOWED[from];
      if (!allowed || allowed.includes('*') || allowed.includes(to)) return;
      const hint =
        FACES.includes(from) && FACES.includes(to) ? ': faces do not import each other; shared code lives in src/runtime, src/kube or src/files' : '';
      context.report({ node, messageId: 'layer', data: { from, to, hint } });
    };
    return {
      ImportDeclaration: (node) => check(node, node.source.value, isTypeOnly(node)),
      ExportNamedDeclaration: (node) => node.source && check(node, node.source.value, isTypeOnly(node)),
      ExportAllDeclaration: (node) => check(node, node.source.value, node.exportKind === 'type'),
      ImportExpression: (node) => node.source.type === 'Literal' && check(node, node.source.value, false),
    };
  },
};

export default { rules: { layers } };
