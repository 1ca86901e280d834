// ListOptions as a 1.32 server checks them before a list or watch (apimachinery's ValidateListOptions):
// `resourceVersionMatch` only beside a `resourceVersion` (list) or with `sendInitialEvents` (watch), and
// `sendInitialEvents` (the WatchList of KEP-3157, on by default in 1.32) only on a watch, with NotOlderThan.
import { queryBool } from './query-bool.js';
import { invalidOptions } from './errors.js';

interface Cause {
  field: string;
  reason: 'FieldValueForbidden' | 'FieldValueNotSupported';
  detail: string;
}

const forbidden = (field: string, detail: string): Cause => ({ field, reason: 'FieldValueForbidden', detail: `Forbidden: ${detail}` });
const notSupported = (field: string, value: string, supported: string[]): Cause => ({
  field,
  reason: 'FieldValueNotSupported',
  detail: `Unsupported value: ${JSON.stringify(value)}: supported values: ${supported.map((s) => JSON.stringify(s)).join(', ')}`,
});

/** the `sendInitialEvents` a watch asked for: undefined when absent */
export function sendInitialEvents(q: URLSearchParams): boolean | undefined {
  return q.has('sendInitialEvents') ? queryBool(q, 'sendInitialEvents') : undefined;
}

/** 422 `ListOptions.meta.k8s.io "" is invalid: …` for what the real server refuses; nothing for the rest */
export function validateListOptions(q: URLSearchParams, watch: boolean): void {
  const match = q.get('resourceVersionMatch') ?? '';
  const initial = sendInitialEvents(q);
  const hasContinue = Boolean(q.get('continue'));
  const causes: Cause[] = [];
  if (watch) {
    if (initial !== undefined && match !== 'NotOlderThan') causes.push(forbidden('resourceVersionMatch', 'sendInitialEvents requires setting resourceVersionMatch to NotOlderThan'));
    if (match) {
      if (initial === undefined) causes.push(forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided'));
      if (match !== 'NotOlderThan') causes.push(notSupported('resourceVersionMatch', match, ['NotOlderThan']));
      if (hasContinue) causes.push(forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden when continue is provided'));
    }
  } else {
    const rv = q.get('resourceVersion') ?? '';
    if (match) {
      if (!rv) causes.push(forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden unless resourceVersion is provided'));
      if (hasContinue) causes.push(forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden when continue is provided'));
      if (match !== 'Exact' && match !== 'NotOlderThan') causes.push(notSupported('resourceVersionMatch', match, ['Exact', 'NotOlderThan', '']));
      if (match === 'Exact' && rv === '0') causes.push(forbidden('resourceVersionMatch', 'resourceVersionMatch "exact" is forbidden for resourceVersion "0"'));
    }
    if (initial !== undefined) causes.push(forbidden('sendInitialEvents', 'sendInitialEvents is forbidden for list'));
  }
  if (causes.length) throw invalidOptions('ListOptions', 'meta.k8s.io', '', causes.map((c) => ({ reason: c.reason, message: c.detail, field: c.field })));
}
