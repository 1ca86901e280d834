// Server-side field validation (`?fieldValidation=Strict|Warn|Ignore`, which kubectl sends on create, apply and
// replace): unknown fields of a create, update or patch body are a 400 under Strict, a `Warning` header each under
// Warn (the default when the parameter is absent, as on a real 1.32 server), and under Warn and Ignore they are
// dropped, as the real server's typed decoding drops them.
import type { ServerResponse } from 'node:http';
import { badRequest } from '../api/errors.js';
import { dropUnknownFields, inspectBody } from '../api/body-fields.js';
import type { ResourceType } from '../types.js';

type Directive = 'Strict' | 'Warn' | 'Ignore';
export type WriteOptionsKind = 'CreateOptions' | 'UpdateOptions' | 'PatchOptions';

/** the directive the request asks for; its value was checked with the request's other options (write-options.ts) */
function directive(q: URLSearchParams): Directive {
  const value = q.get('fieldValidation') ?? '';
  return value === '' ? 'Warn' : (value as Directive);
}

/** a Warning header value as the real server's warning recorder writes it: code, agent, quoted text */
function warningHeader(text: string): string {
  return `299 - "${text.replace(/["\\]/g, (c) => `\\${c}`)}"`;
}

export function addWarnings(res: ServerResponse, texts: string[]): void {
  if (texts.length === 0) return;
  const existing = res.getHeader('Warning');
  const before = existing === undefined ? [] : Array.isArray(existing) ? existing : [String(existing)];
  res.setHeader('Warning', [...before, ...texts.map(warningHeader)]);
}

/**
 * Checks `obj` (a create or update body, or a patched object) against its kind's fields as the request's
 * directive says. A body that cannot be decoded strictly reads, on a real server, "Pod in version "v1" cannot be
 * handled as a Pod: strict decoding error: ..." for create and update, and only "strict decoding error: ..." for a
 * patch.
 */
export function validateFields(rt: ResourceType, obj: Record<string, unknown>, q: URLSearchParams, res: ServerResponse, optionsKind: WriteOptionsKind): void {
  const wanted = directive(q);
  // a value of the wrong JSON type fails the typed decoding whatever the directive: nothing is stored
  const { mismatch, unknown } = inspectBody(rt.kind, rt.version, obj);
  if (mismatch) {
    const text = `json: ${mismatch.text}`;
    throw badRequest(optionsKind === 'PatchOptions' ? text : `${rt.kind} in version ${JSON.stringify(rt.version)} cannot be handled as a ${rt.kind}: ${text}`);
  }
  if (unknown.length === 0) return;
  const errors = unknown.map((f) => `unknown field ${JSON.stringify(f.path)}`);
  if (wanted === 'Strict') {
    const strict = `strict decoding error: ${errors.join(', ')}`;
    throw badRequest(optionsKind === 'PatchOptions' ? strict : `${rt.kind} in version ${JSON.stringify(rt.version)} cannot be handled as a ${rt.kind}: ${strict}`);
  }
  if (wanted === 'Warn') addWarnings(res, errors);
  dropUnknownFields(unknown);
}
