/**
 * Task params → environment variables, exactly as Concourse converts them (atc CoercedString): null is
 * empty, strings as they are, numbers as written, anything else (booleans, lists, maps) as Go's
 * encoding/json writes it (map keys sorted, `<`, `>` and `&` escaped). fly execute lets a variable of
 * its own shell override a param the task lists; berth does the same. Pure.
 */
import { isAlias, isMap, isScalar, isSeq, type Node } from 'yaml';

/** The environment value of one param's YAML node. */
export function paramValue(node: Node | null | undefined): string {
  if (node === null || node === undefined) return '';
  if (isScalar(node)) {
    const v = node.value;
    if (v === null || v === undefined) return '';
    if (typeof v === 'string') return v;
    if (typeof v === 'bigint') return v.toString();
    if (typeof v === 'number') return goNumber(v);
    return goJson(v);
  }
  return goJson(plain(node));
}

/** Params with each one the caller's environment also sets replaced by that value (fly execute). */
export function overrideFromEnv(params: Record<string, string>, env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(params)) out[k] = env[k] !== undefined ? (env[k] as string) : v;
  return out;
}

/** A YAML node as plain data, keeping integers exact (bigint). */
function plain(node: unknown): unknown {
  if (isAlias(node)) return null;
  if (isScalar(node)) return node.value;
  if (isSeq(node)) return node.items.map(plain);
  if (isMap(node)) {
    const out: Record<string, unknown> = {};
    for (const p of node.items) out[String(isScalar(p.key) ? p.key.value : p.key)] = plain(p.value);
    return out;
  }
  return node ?? null;
}

/** Go's encoding/json: sorted map keys, HTML-safe escapes, no spaces. */
export function goJson(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'bigint') return v.toString();
  if (typeof v === 'number') return goNumber(v);
  if (typeof v === 'boolean') return String(v);
  if (typeof v === 'string')
    return JSON.stringify(v)
      .replace(/</g, '\\u003c')
      .replace(/>/g, '\\u003e')
      .replace(/&/g, '\\u0026')
      .replace(/\u2028/g, '\\u2028')
      .replace(/\u2029/g, '\\u2029');
  if (v instanceof Date) return goJson(v.toISOString());
  if (Array.isArray(v)) return `[${v.map(goJson).join(',')}]`;
  const entries = Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, x]) => `${goJson(k)}:${goJson(x)}`).join(',')}}`;
}

/** float64 as Go's json writes it: integral values without a fraction, others shortest; exponent past 1e21. */
function goNumber(n: number): string {
  if (!Number.isFinite(n)) return JSON.stringify(String(n));
  const abs = Math.abs(n);
  if (abs !== 0 && (abs < 1e-6 || abs >= 1e21)) return n.toExponential().replace(/e([+-])(\d)$/, 'e$10$2');
  return String(n);
}
