// Kubernetes resource quantities ("100m", "1.5", "64Mi", "1e3") as plain numbers in base units.

const BINARY: Record<string, number> = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60 };
const DECIMAL: Record<string, number> = { n: 1e-9, u: 1e-6, m: 1e-3, '': 1, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18 };

/** cores for cpu, bytes for memory; throws on text that is no quantity */
export function parseQuantity(q: string | number): number {
  if (typeof q === 'number') return q;
  const m = /^([+-]?(?:\d+\.?\d*|\.\d+))(?:([eE][+-]?\d+)|(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)?)$/.exec(q.trim());
  if (!m) throw new Error(`quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$': ${q}`);
  const n = Number(m[1]);
  if (m[2]) return n * 10 ** Number(m[2].slice(1));
  const suffix = m[3] ?? '';
  return n * (BINARY[suffix] ?? DECIMAL[suffix]!);
}

export type ResourceList = Record<string, string | number>;

/** what the scheduler counts for a pod: max(sum of containers, largest init container), per resource */
export function podRequests(spec: any): Record<string, number> {
  const sum: Record<string, number> = {};
  for (const c of spec?.containers ?? []) {
    for (const [k, v] of Object.entries(effectiveRequests(c))) sum[k] = (sum[k] ?? 0) + v;
  }
  for (const c of spec?.initContainers ?? []) {
    for (const [k, v] of Object.entries(effectiveRequests(c))) sum[k] = Math.max(sum[k] ?? 0, v);
  }
  return sum;
}

/** requests default to limits when only limits are given (API defaulting) */
function effectiveRequests(c: any): Record<string, number> {
  const out: Record<string, number> = {};
  const limits: ResourceList = c?.resources?.limits ?? {};
  const requests: ResourceList = c?.resources?.requests ?? {};
  for (const [k, v] of Object.entries(limits)) out[k] = parseQuantity(v);
  for (const [k, v] of Object.entries(requests)) out[k] = parseQuantity(v);
  return out;
}

/** Guaranteed / Burstable / BestEffort, as the API server computes status.qosClass */
export function qosClass(spec: any): 'Guaranteed' | 'Burstable' | 'BestEffort' {
  const all = [...(spec?.initContainers ?? []), ...(spec?.containers ?? [])];
  let any = false;
  let guaranteed = true;
  for (const c of all) {
    const limits: ResourceList = c?.resources?.limits ?? {};
    const requests: ResourceList = c?.resources?.requests ?? {};
    const relevant = (k: string) => k === 'cpu' || k === 'memory';
    if (Object.keys(limits).some(relevant) || Object.keys(requests).some(relevant)) any = true;
    for (const r of ['cpu', 'memory']) {
      if (limits[r] === undefined) {
        guaranteed = false;
        continue;
      }
      if (requests[r] !== undefined && parseQuantity(requests[r]) !== parseQuantity(limits[r])) guaranteed = false;
    }
  }
  if (!any) return 'BestEffort';
  return guaranteed ? 'Guaranteed' : 'Burstable';
}
