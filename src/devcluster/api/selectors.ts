// Label and field selectors with the grammar and error messages of apimachinery's labels.Parse and
// fields.ParseSelector, so `kubectl get -l ...` and watches filter exactly as on a real cluster.
import type { KubeObject, ResourceType } from '../types.js';
import { badRequest } from './errors.js';
import { labelKeyErrors, labelValueErrors } from './validation.js';

export type LabelOperator = 'Equals' | 'NotEquals' | 'In' | 'NotIn' | 'Exists' | 'DoesNotExist' | 'GreaterThan' | 'LessThan';

export interface LabelRequirement {
  key: string;
  operator: LabelOperator;
  values: string[];
}

type TokenKind = 'id' | 'in' | 'notin' | '!' | '=' | '==' | '!=' | '(' | ')' | ',' | '>' | '<' | 'end';
interface Token {
  kind: TokenKind;
  text: string;
}

const SPECIAL = new Set(['!', '=', '(', ')', ',', '>', '<']);

function tokenize(s: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < s.length) {
    const c = s[i]!;
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r') {
      i++;
      continue;
    }
    const two = s.slice(i, i + 2);
    if (two === '==' || two === '!=') {
      out.push({ kind: two, text: two });
      i += 2;
      continue;
    }
    if (SPECIAL.has(c)) {
      out.push({ kind: c as TokenKind, text: c });
      i++;
      continue;
    }
    let j = i;
    while (j < s.length && !SPECIAL.has(s[j]!) && !/\s/.test(s[j]!)) j++;
    const word = s.slice(i, j);
    out.push({ kind: word === 'in' ? 'in' : word === 'notin' ? 'notin' : 'id', text: word });
    i = j;
  }
  out.push({ kind: 'end', text: '' });
  return out;
}

/** `requirement` errors are wrapped as the real parser wraps them */
class RequirementError extends Error {}

function describe(t: Token): string {
  return t.kind === 'end' ? '' : t.text;
}

/** parses a label selector; throws ApiError 400 with the real server's wording */
export function parseLabelSelector(s: string): LabelRequirement[] {
  const toks = tokenize(s);
  let pos = 0;
  const peek = () => toks[pos]!;
  const next = () => toks[pos++]!;
  const reqs: LabelRequirement[] = [];
  if (peek().kind === 'end') return reqs;
  try {
    for (;;) {
      reqs.push(parseRequirement());
      const t = next();
      if (t.kind === 'end') break;
      if (t.kind !== ',') throw new Error(`found '${describe(t)}', expected: ',' or 'end of string'`);
      const after = peek();
      if (after.kind !== 'id' && after.kind !== '!') throw new Error(`found '${describe(after)}', expected: identifier or '!'`);
    }
  } catch (e) {
    const msg = (e as Error).message;
    throw badRequest(e instanceof RequirementError ? `unable to parse requirement: ${msg}` : msg);
  }
  return reqs;

  function parseRequirement(): LabelRequirement {
    let t = next();
    if (t.kind === '!') {
      t = next();
      if (t.kind !== 'id') throw new RequirementError(`found '${describe(t)}', expected: identifier after '!'`);
      checkKey(t.text);
      const after = peek();
      if (after.kind !== ',' && after.kind !== 'end') throw new RequirementError(`found '${describe(after)}', expected: ',' or 'end of string'`);
      return { key: t.text, operator: 'DoesNotExist', values: [] };
    }
    if (t.kind !== 'id') throw new RequirementError(`found '${describe(t)}', expected: !, identifier, or 'end of string'`);
    const key = t.text;
    checkKey(key);
    const op = peek();
    if (op.kind === ',' || op.kind === 'end') return { key, operator: 'Exists', values: [] };
    next();
    switch (op.kind) {
      case '=':
      case '==':
      case '!=': {
        const v = peek();
        let value = '';
        if (v.kind === 'id') value = next().text;
        else if (v.kind !== ',' && v.kind !== 'end') throw new RequirementError(`found '${describe(v)}', expected: identifier`);
        checkValue(value);
        return { key, operator: op.kind === '!=' ? 'NotEquals' : 'Equals', values: [value] };
      }
      case '>':
      case '<': {
        const v = next();
        if (v.kind !== 'id' || !/^-?\d+$/.test(v.text)) throw new RequirementError(`for 'Gt', 'Lt' operators, exactly one value is required`);
        return { key, operator: op.kind === '>' ? 'GreaterThan' : 'LessThan', values: [v.text] };
      }
      case 'in':
      case 'notin': {
        const open = next();
        if (open.kind !== '(') throw new RequirementError(`found '${describe(open)}', expected: '('`);
        const values: string[] = [];
        for (;;) {
          const v = peek();
          if (v.kind === 'id') {
            values.push(next().text);
          } else if (v.kind === ',' || v.kind === ')') {
            values.push(''); // `in (a,)` means a or the empty value, as in the real parser
          } else {
            throw new RequirementError(`found '${describe(v)}', expected: ',', ')' or identifier`);
          }
          const sep = next();
          if (sep.kind === ')') break;
          if (sep.kind !== ',') throw new RequirementError(`found '${describe(sep)}', expected: ',' or ')'`);
        }
        for (const v of values) checkValue(v);
        return { key, operator: op.kind === 'in' ? 'In' : 'NotIn', values };
      }
      default:
        throw new RequirementError(`found '${describe(op)}', expected: in, notin, =, ==, !=, gt, lt`);
    }
  }
}

function checkKey(key: string): void {
  const errs = labelKeyErrors(key);
  if (errs.length) throw new RequirementError(`key: Invalid value: ${JSON.stringify(key)}: ${errs.join('; ')}`);
}

function checkValue(value: string): void {
  const errs = labelValueErrors(value);
  if (errs.length) throw new RequirementError(`values[0]: Invalid value: ${JSON.stringify(value)}: ${errs.join('; ')}`);
}

export function matchesLabels(reqs: LabelRequirement[], labels: Record<string, string> | undefined): boolean {
  const l = labels ?? {};
  return reqs.every((r) => {
    const has = Object.prototype.hasOwnProperty.call(l, r.key);
    const v = l[r.key];
    switch (r.operator) {
      case 'Exists':
        return has;
      case 'DoesNotExist':
        return !has;
      case 'Equals':
      case 'In':
        return has && r.values.includes(v!);
      case 'NotEquals':
      case 'NotIn':
        return !has || !r.values.includes(v!);
      case 'GreaterThan':
      case 'LessThan': {
        if (!has || !/^-?\d+$/.test(v!)) return false;
        const n = Number(v);
        const limit = Number(r.values[0]);
        return r.operator === 'GreaterThan' ? n > limit : n < limit;
      }
    }
  });
}

// ---- field selectors ----

export interface FieldRequirement {
  field: string;
  operator: 'Equals' | 'NotEquals';
  value: string;
}

type FieldGetter = (o: KubeObject) => string;

const COMMON_FIELDS: Record<string, FieldGetter> = {
  'metadata.name': (o) => o.metadata.name ?? '',
  'metadata.namespace': (o) => o.metadata.namespace ?? '',
};

const str = (v: unknown): string => (v === undefined || v === null ? '' : String(v));

const KIND_FIELDS: Record<string, Record<string, FieldGetter>> = {
  Pod: {
    'spec.nodeName': (o) => str(o.spec?.nodeName),
    'spec.restartPolicy': (o) => str(o.spec?.restartPolicy),
    'spec.schedulerName': (o) => str(o.spec?.schedulerName),
    'spec.serviceAccountName': (o) => str(o.spec?.serviceAccountName),
    'spec.hostNetwork': (o) => String(o.spec?.hostNetwork === true),
    'status.phase': (o) => str(o.status?.phase),
    'status.podIP': (o) => str(o.status?.podIP),
    'status.nominatedNodeName': (o) => str(o.status?.nominatedNodeName),
  },
  Event: {
    'involvedObject.kind': (o) => str(o.involvedObject?.kind),
    'involvedObject.namespace': (o) => str(o.involvedObject?.namespace),
    'involvedObject.name': (o) => str(o.involvedObject?.name),
    'involvedObject.uid': (o) => str(o.involvedObject?.uid),
    'involvedObject.apiVersion': (o) => str(o.involvedObject?.apiVersion),
    'involvedObject.resourceVersion': (o) => str(o.involvedObject?.resourceVersion),
    'involvedObject.fieldPath': (o) => str(o.involvedObject?.fieldPath),
    reason: (o) => str(o.reason),
    reportingComponent: (o) => str(o.reportingComponent),
    source: (o) => str(o.source?.component),
    type: (o) => str(o.type),
  },
  Secret: { type: (o) => str(o.type) },
  Namespace: { 'status.phase': (o) => str(o.status?.phase) },
  Node: { 'spec.unschedulable': (o) => String(o.spec?.unschedulable === true) },
};

function fieldGetter(rt: ResourceType, field: string): FieldGetter | undefined {
  return COMMON_FIELDS[field] ?? KIND_FIELDS[rt.kind]?.[field];
}

/** splits on unescaped commas; `\,` `\=` `\!` `\\` are escapes as in fields.ParseSelector */
function splitTerms(s: string): string[] {
  const terms: string[] = [];
  let cur = '';
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (c === '\\' && i + 1 < s.length) {
      cur += c + s[i + 1];
      i++;
    } else if (c === ',') {
      terms.push(cur);
      cur = '';
    } else {
      cur += c;
    }
  }
  terms.push(cur);
  return terms;
}

function unescape(s: string): string {
  return s.replace(/\\(.)/g, '$1');
}

/** finds the first unescaped operator in a term */
function splitTerm(term: string): { lhs: string; op: '=' | '==' | '!='; rhs: string } | undefined {
  for (let i = 0; i < term.length; i++) {
    const c = term[i]!;
    if (c === '\\') {
      i++;
      continue;
    }
    if (c === '!' && term[i + 1] === '=') return { lhs: term.slice(0, i), op: '!=', rhs: term.slice(i + 2) };
    if (c === '=' && term[i + 1] === '=') return { lhs: term.slice(0, i), op: '==', rhs: term.slice(i + 2) };
    if (c === '=') return { lhs: term.slice(0, i), op: '=', rhs: term.slice(i + 1) };
  }
  return undefined;
}

export function parseFieldSelector(rt: ResourceType, s: string): FieldRequirement[] {
  const out: FieldRequirement[] = [];
  if (s.trim() === '') return out;
  for (const term of splitTerms(s)) {
    if (term === '') continue;
    const parts = splitTerm(term);
    if (!parts) throw badRequest(`invalid selector: '${s}'; can't understand '${term}'`);
    const field = parts.lhs.trim();
    if (!fieldGetter(rt, field)) throw badRequest(`field label not supported: ${field}`);
    out.push({ field, operator: parts.op === '!=' ? 'NotEquals' : 'Equals', value: unescape(parts.rhs) });
  }
  return out;
}

export function matchesFields(rt: ResourceType, reqs: FieldRequirement[], obj: KubeObject): boolean {
  return reqs.every((r) => {
    const get = fieldGetter(rt, r.field);
    const v = get ? get(obj) : '';
    return r.operator === 'Equals' ? v === r.value : v !== r.value;
  });
}

/** a parsed label + field selector pair, as lists and watches take them */
export interface ObjectFilter {
  labels: LabelRequirement[];
  fields: FieldRequirement[];
}

export function parseFilter(rt: ResourceType, labelSelector: string | undefined, fieldSelector: string | undefined): ObjectFilter {
  return { labels: parseLabelSelector(labelSelector ?? ''), fields: parseFieldSelector(rt, fieldSelector ?? '') };
}

export function matchesFilter(rt: ResourceType, f: ObjectFilter, obj: KubeObject): boolean {
  return matchesLabels(f.labels, obj.metadata.labels) && matchesFields(rt, f.fields, obj);
}
