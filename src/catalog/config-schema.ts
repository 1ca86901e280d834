/**
 * KEP-2906 gives every function version an `openAPIV3Schema`, so that a wrong function config is
 * caught before anything runs. The config is checked as a CRD's object is: the whole object, with
 * `apiVersion`, `kind` and `metadata` always allowed at its root (the API server adds them to every
 * CRD schema, so catalog schemas, like CRD ones, need not name them). OpenAPI's `nullable` is read as
 * ajv reads it; unknown formats and `x-kubernetes-*` extensions are ignored. A refusal names the config
 * file, line and column of each problem, the field, and the catalog entry whose schema refused it.
 */
import { Ajv, type ValidateFunction } from 'ajv';
import { LineCounter, parseAllDocuments, type Document } from 'yaml';
import type { FunctionMatch } from './resolve.js';
import { describeSchemaError, locateSchemaError, schemaErrorField } from './yaml-errors.js';

export interface ConfigSource {
  /** The file as the user named it (what messages show). */
  file: string;
  text: string;
  /** Which YAML document of the file (default 0). */
  index?: number;
}

export interface ConfigIssue {
  field: string;
  message: string;
  line?: number;
  column?: number;
}

export class ConfigSchemaError extends Error {
  constructor(
    message: string,
    readonly issues: ConfigIssue[],
  ) {
    super(message);
    this.name = 'ConfigSchemaError';
  }
}

const ajv = new Ajv({ allErrors: true, strict: false, verbose: true, logger: false });
const compiled = new WeakMap<object, ValidateFunction>();

/** Where the schema came from, as messages name it: `InjectSidecar fn.example.org/v1beta1 in catalog platform-fns (cat.yaml)`. */
export function describeEntry(m: FunctionMatch): string {
  return `${m.definition.names.kind} ${m.definition.group}/${m.version.name} in catalog ${m.catalog.name} (${m.catalog.ref})`;
}

function validatorFor(m: FunctionMatch): ValidateFunction | undefined {
  const schema = m.version.schema?.openAPIV3Schema;
  if (!schema) return undefined;
  let validate = compiled.get(schema);
  if (!validate) {
    const props = (schema.properties ?? {}) as Record<string, unknown>;
    const root = { ...schema, properties: { apiVersion: { type: 'string' }, kind: { type: 'string' }, metadata: { type: 'object' }, ...props } };
    try {
      validate = ajv.compile(root);
    } catch (err) {
      throw new ConfigSchemaError(`the openAPIV3Schema of ${describeEntry(m)} is not a valid schema: ${(err as Error).message}`, []);
    }
    compiled.set(schema, validate);
  }
  return validate;
}

/** The document of `source` the config came from, with a line counter for positions. */
function sourceDocument(source: ConfigSource): { doc: Document; lines: LineCounter } | undefined {
  const lines = new LineCounter();
  const docs = parseAllDocuments(source.text, { lineCounter: lines });
  const doc = Array.isArray(docs) ? docs[source.index ?? 0] : undefined;
  return doc ? { doc, lines } : undefined;
}

/** Throws ConfigSchemaError when `config` breaks the schema of the catalog entry it resolved to. */
export function checkFunctionConfig(config: unknown, match: FunctionMatch, source?: ConfigSource): void {
  const validate = validatorFor(match);
  if (!validate || validate(config)) return;
  const located = source ? sourceDocument(source) : undefined;
  const seen = new Set<string>();
  const issues: ConfigIssue[] = [];
  for (const err of validate.errors ?? []) {
    const message = describeSchemaError(err);
    if (located) {
      const { field, offset } = locateSchemaError(located.doc, err);
      const pos = located.lines.linePos(offset);
      issues.push({ field, message, line: pos.line, column: pos.col });
    } else {
      issues.push({ field: schemaErrorField(err), message });
    }
    const key = JSON.stringify(issues.at(-1));
    if (seen.has(key)) issues.pop();
    else seen.add(key);
  }
  const where = source?.file ?? '(no file)';
  const lines = issues.map(
    (i) => `  ${i.line !== undefined ? `${where}:${i.line}:${i.column}: ` : `function config ${where}: `}${i.field ? `${i.field}: ` : ''}${i.message}`,
  );
  throw new ConfigSchemaError(
    `function config ${where} does not match the schema of ${describeEntry(match)}:\n${lines.join('\n')}\nfix the config (or, to run it unchecked, pass --skip-schema)`,
    issues,
  );
}

export const SKIP_SCHEMA_WARNING =
  'warning: --skip-schema: function configs are not checked against their catalog schemas; a wrong config reaches the function';
