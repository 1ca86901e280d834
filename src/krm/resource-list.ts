/**
 * The KRM function wire format (functions spec v1): one ResourceList in, one out. `parseResourceList`
 * reads berth's own input (`fn eval -`) as leniently as kyaml's reader: any ResourceList/List with
 * items, or a bare multi-document stream; results also in the legacy `results: {items: [...]}` shape
 * that kpt still reads. What a function prints is checked strictly instead (function-output.ts).
 */
import YAML, { parseAllDocuments } from 'yaml';
import type { KrmObject } from './package.js';

export interface KrmResult {
  message: string;
  severity?: 'error' | 'warning' | 'info';
  resourceRef?: { apiVersion?: string; kind?: string; name?: string; namespace?: string };
  field?: { path?: string; currentValue?: unknown; proposedValue?: unknown };
  file?: { path?: string; index?: number };
  tags?: Record<string, string>;
}

export interface ResourceList {
  apiVersion: string;
  kind: 'ResourceList';
  items: KrmObject[];
  functionConfig?: KrmObject;
  results?: KrmResult[];
}

export class ResourceListError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ResourceListError';
  }
}

export function serializeResourceList(items: KrmObject[], functionConfig?: KrmObject): string {
  const list: Record<string, unknown> = { apiVersion: 'config.kubernetes.io/v1', kind: 'ResourceList', items };
  if (functionConfig) list.functionConfig = functionConfig;
  return YAML.stringify(list, { lineWidth: 0 });
}

export function parseResourceList(text: string): ResourceList {
  const docs = parseAllDocuments(text);
  if (!Array.isArray(docs)) throw new ResourceListError('the function output is not YAML');
  for (const d of docs) if (d.errors.length) throw new ResourceListError(`the function output is not YAML: ${d.errors[0].message.split('\n')[0]}`);
  const values = docs.map((d) => d.toJS() as unknown).filter((v) => v !== null && v !== undefined);
  if (values.length === 1) {
    const v = values[0] as Record<string, unknown>;
    if ((v.kind === 'ResourceList' || v.kind === 'List') && (Array.isArray(v.items) || v.items === null || v.functionConfig)) {
      return {
        apiVersion: typeof v.apiVersion === 'string' ? v.apiVersion : 'config.kubernetes.io/v1',
        kind: 'ResourceList',
        items: ((v.items as KrmObject[] | null) ?? []).filter((i) => i && typeof i === 'object'),
        functionConfig: v.functionConfig as KrmObject | undefined,
        results: normalizeResults(v.results),
      };
    }
  }
  const items = values.filter((v): v is KrmObject => typeof v === 'object' && !Array.isArray(v));
  return { apiVersion: 'config.kubernetes.io/v1', kind: 'ResourceList', items };
}

export function normalizeResults(raw: unknown): KrmResult[] {
  const list = Array.isArray(raw)
    ? raw
    : raw && typeof raw === 'object' && Array.isArray((raw as { items?: unknown }).items)
      ? (raw as { items: unknown[] }).items
      : [];
  return list
    .filter((r): r is Record<string, unknown> => !!r && typeof r === 'object')
    .map((r) => {
      const out: KrmResult = { message: String(r.message ?? '') };
      // Kept as given (results.yaml records it so); a result without one counts as an error.
      const sev = r.severity;
      if (sev === 'warning' || sev === 'info' || sev === 'error') out.severity = sev;
      const ref = r.resourceRef as Record<string, unknown> | undefined;
      if (ref) {
        const meta = (ref.metadata ?? {}) as Record<string, string>;
        out.resourceRef = {
          apiVersion: ref.apiVersion as string,
          kind: ref.kind as string,
          name: (ref.name as string) ?? meta.name,
          namespace: (ref.namespace as string) ?? meta.namespace,
        };
      }
      if (r.field && typeof r.field === 'object') {
        const f = r.field as Record<string, unknown>;
        out.field = { path: f.path as string, currentValue: f.currentValue, proposedValue: f.proposedValue ?? f.suggestedValue };
      }
      if (r.file && typeof r.file === 'object') out.file = r.file as KrmResult['file'];
      if (r.tags && typeof r.tags === 'object') out.tags = r.tags as Record<string, string>;
      return out;
    });
}

/** kpt-style lines: `[error] v1/Service/cart: message (field spec.x)`. */
export function formatResult(r: KrmResult): string {
  const ref = r.resourceRef ? ` ${[r.resourceRef.apiVersion, r.resourceRef.kind, r.resourceRef.namespace, r.resourceRef.name].filter(Boolean).join('/')}:` : '';
  const field = r.field?.path
    ? ` (field ${r.field.path}${r.field.proposedValue !== undefined ? `, proposed ${JSON.stringify(r.field.proposedValue)}` : ''})`
    : '';
  const file = r.file?.path ? ` [${r.file.path}]` : '';
  return `[${r.severity ?? 'error'}]${ref} ${r.message}${field}${file}`;
}

/** The ConfigMap kpt builds from `key=value` arguments or a Kptfile `configMap:` entry. */
export function configMapFrom(data: Record<string, string>): KrmObject {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'function-input', annotations: { 'config.kubernetes.io/local-config': 'true' } },
    data,
  };
}
