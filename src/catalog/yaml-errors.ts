/**
 * Ajv errors about a YAML document, told the way a person fixes them: the dotted field path, the line
 * and column of the node in question (the yaml package keeps every node's source range; ajv's
 * instancePath says which node), and the problem in words.
 */
import type { ErrorObject } from 'ajv';
import { isMap, isPair, isScalar, type Document, type Node } from 'yaml';

export function describeSchemaError(err: ErrorObject): string {
  const p = err.params as Record<string, unknown>;
  switch (err.keyword) {
    case 'required':
      return `missing required field "${String(p.missingProperty)}"`;
    case 'additionalProperties':
      return `unknown field "${String(p.additionalProperty)}"`;
    case 'enum':
      return `must be one of ${(p.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
    case 'const':
      return `must be ${JSON.stringify(p.allowedValue)}`;
    case 'not': {
      const forbidden = forbiddenFields(err);
      return forbidden.length
        ? `must not have the field${forbidden.length > 1 ? 's' : ''} ${forbidden.map((f) => `"${f}"`).join(', ')}`
        : 'must not match the schema under "not"';
    }
    default:
      return err.message ?? err.keyword;
  }
}

/** `not: {required: [a]}` (or `anyOf` of such) is how schemas forbid a field: which fields, when ajv ran with verbose. */
function forbiddenFields(err: ErrorObject): string[] {
  const schema = err.schema as { required?: unknown; anyOf?: Array<{ required?: unknown }> } | undefined;
  const data = err.data as Record<string, unknown> | undefined;
  const named = [schema?.required, ...(schema?.anyOf ?? []).map((s) => s.required)].flatMap((r) => (Array.isArray(r) ? r.map(String) : []));
  return named.filter((f) => data && typeof data === 'object' && f in data);
}

function pointerKeys(instancePath: string): Array<string | number> {
  return instancePath
    .split('/')
    .slice(1)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((k) => (/^\d+$/.test(k) ? Number(k) : k));
}

function keyNode(node: unknown, key: string): Node | undefined {
  if (!isMap(node)) return undefined;
  const pair = node.items.find((it) => isPair(it) && isScalar(it.key) && it.key.value === key);
  return pair?.key as Node | undefined;
}

/** The dotted path of the field an error is about (a missing, unknown or forbidden field included). */
export function schemaErrorField(err: ErrorObject): string {
  const path = pointerKeys(err.instancePath).map(String);
  const p = err.params as Record<string, unknown>;
  if (err.keyword === 'required') return [...path, String(p.missingProperty)].join('.');
  const named = err.keyword === 'additionalProperties' ? [String(p.additionalProperty)] : err.keyword === 'not' ? forbiddenFields(err) : [];
  return (named.length ? [...path, named[0]] : path).join('.');
}

/** The node an error is about: the field itself, or for a missing/unknown/forbidden field its parent or key. */
export function locateSchemaError(doc: Document, err: ErrorObject): { field: string; offset: number } {
  const keys = pointerKeys(err.instancePath);
  const node = (keys.length ? doc.getIn(keys, true) : doc.contents) as Node | undefined;
  const p = err.params as Record<string, unknown>;
  let offset = node?.range?.[0] ?? 0;
  const named = err.keyword === 'additionalProperties' ? [String(p.additionalProperty)] : err.keyword === 'not' ? forbiddenFields(err) : [];
  const key = named.length ? keyNode(node, named[0]) : undefined;
  if (key?.range) offset = key.range[0];
  return { field: schemaErrorField(err), offset };
}
