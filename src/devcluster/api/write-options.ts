// The options of a write as a 1.32 server checks them before it does anything (apimachinery's
// ValidateCreateOptions, ValidateUpdateOptions, ValidatePatchOptions, ValidateDeleteOptions): a dryRun other than
// "All" is refused, never taken for a real write; so are an unprintable or too long fieldManager, an unknown
// fieldValidation, `force` on a patch other than apply, and an unknown or doubly given propagation policy.
import { invalidOptions } from './errors.js';

export type WriteOptionsKind = 'CreateOptions' | 'UpdateOptions' | 'PatchOptions' | 'DeleteOptions';

interface Cause {
  field: string;
  reason: 'FieldValueInvalid' | 'FieldValueNotSupported' | 'FieldValueForbidden' | 'FieldValueTooLong';
  message: string;
}

const FIELD_MANAGER_MAX_LENGTH = 128;
const FIELD_VALIDATIONS = ['', 'Ignore', 'Strict', 'Warn'];
const PROPAGATION_POLICIES = ['Foreground', 'Background', 'Orphan', 'nil'];

const quoted = (values: string[]) => values.map((v) => JSON.stringify(v)).join(', ');

/** `%#v` of a Go []string, as field.NotSupported prints the dryRun it refuses */
const goStringSlice = (values: string[]) => `[]string{${quoted(values)}}`;

function dryRunCauses(dryRun: string[]): Cause[] {
  if (dryRun.every((v) => v === 'All')) return [];
  return [{ field: 'dryRun', reason: 'FieldValueNotSupported', message: `Unsupported value: ${goStringSlice(dryRun)}: supported values: "All"` }];
}

function fieldManagerCauses(manager: string): Cause[] {
  const causes: Cause[] = [];
  if (Buffer.byteLength(manager) > FIELD_MANAGER_MAX_LENGTH) {
    causes.push({ field: 'fieldManager', reason: 'FieldValueTooLong', message: `Too long: must have at most ${FIELD_MANAGER_MAX_LENGTH} bytes` });
  }
  let position = 0;
  for (const ch of manager) {
    // unicode.IsPrint: letters, marks, numbers, punctuation, symbols and the ASCII space
    if (!/^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u.test(ch)) {
      const code = ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0');
      causes.push({ field: 'fieldManager', reason: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(manager)}: invalid character U+${code} (at position ${position})` });
    }
    position += Buffer.byteLength(ch);
  }
  return causes;
}

function refuse(kind: WriteOptionsKind, causes: Cause[]): void {
  if (causes.length) throw invalidOptions(kind, 'meta.k8s.io', '', causes);
}

/** 422 `CreateOptions.meta.k8s.io "" is invalid: …` for the query options of a create, update or patch */
export function validateWriteOptions(kind: 'CreateOptions' | 'UpdateOptions' | 'PatchOptions', q: URLSearchParams): void {
  const causes: Cause[] = [];
  if (kind === 'PatchOptions' && q.has('force')) {
    // only reached for patches other than apply, which the dev cluster refuses before this
    causes.push({ field: 'force', reason: 'FieldValueForbidden', message: 'Forbidden: may not be specified for non-apply patch' });
  }
  causes.push(...fieldManagerCauses(q.get('fieldManager') ?? ''));
  causes.push(...dryRunCauses(q.getAll('dryRun')));
  const validation = q.get('fieldValidation') ?? '';
  if (!FIELD_VALIDATIONS.includes(validation)) {
    causes.push({ field: 'fieldValidation', reason: 'FieldValueNotSupported', message: `Unsupported value: ${JSON.stringify(validation)}: supported values: ${quoted(FIELD_VALIDATIONS)}` });
  }
  refuse(kind, causes);
}

export interface RawDeleteOptions {
  propagationPolicy?: string;
  orphanDependents?: boolean;
  dryRun: string[];
}

/** 422 `DeleteOptions.meta.k8s.io "" is invalid: …`, as ValidateDeleteOptions refuses them */
export function validateDeleteOptions(o: RawDeleteOptions): void {
  const causes: Cause[] = [];
  const policy = o.propagationPolicy;
  if (o.orphanDependents !== undefined && policy !== undefined) {
    causes.push({ field: 'propagationPolicy', reason: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(policy)}: orphanDependents and deletionPropagation cannot be both set` });
  }
  if (policy !== undefined && !PROPAGATION_POLICIES.slice(0, 3).includes(policy)) {
    causes.push({ field: 'propagationPolicy', reason: 'FieldValueNotSupported', message: `Unsupported value: ${JSON.stringify(policy)}: supported values: ${quoted(PROPAGATION_POLICIES)}` });
  }
  causes.push(...dryRunCauses(o.dryRun));
  refuse('DeleteOptions', causes);
}
