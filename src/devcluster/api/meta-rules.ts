// ObjectMeta rules beyond names and labels (apimachinery ValidateObjectMetaAccessor and its Update, core's
// validateKubeFinalizerName): owner references must name their owner fully, finalizers are qualified names, and
// an update may neither change the uid nor start a deletion nor add a finalizer to an object being deleted.
import type { KubeObject, OwnerReference } from '../types.js';
import { labelKeyErrors } from './validation.js';
import { fieldForbidden, fieldInvalid, type FieldError } from './validation-fields.js';

const STANDARD_FINALIZERS = new Set(['kubernetes', 'orphan', 'foregroundDeletion']);
const IMMUTABLE = 'field is immutable';

/** time.Time's String(), as a *metav1.Time appears in a field error */
function goTime(rfc3339: string): string {
  const d = new Date(rfc3339);
  if (Number.isNaN(d.getTime())) return rfc3339;
  return `${d.toISOString().replace('T', ' ').replace(/\.\d{3}Z$/, '')} +0000 UTC`;
}

export function ownerReferenceErrors(meta: KubeObject['metadata']): FieldError[] {
  const errs: FieldError[] = [];
  const path = 'metadata.ownerReferences';
  let controller = '';
  // a body is not yet checked against its type: any field may be missing
  const refs = (meta.ownerReferences ?? []) as Array<Partial<OwnerReference>>;
  for (const ref of refs) {
    const apiVersion = String(ref.apiVersion ?? '');
    const version = apiVersion.includes('/') ? apiVersion.split('/')[1] : apiVersion;
    if (!version) errs.push(fieldInvalid(`${path}.apiVersion`, apiVersion, 'version must not be empty'));
    if (!ref.kind) errs.push(fieldInvalid(`${path}.kind`, String(ref.kind ?? ''), 'kind must not be empty'));
    if (!ref.name) errs.push(fieldInvalid(`${path}.name`, String(ref.name ?? ''), 'name must not be empty'));
    if (!ref.uid) errs.push(fieldInvalid(`${path}.uid`, String(ref.uid ?? ''), 'uid must not be empty'));
    if (ref.controller === true) {
      const current = `${String(ref.kind ?? '')}/${String(ref.name ?? '')}`;
      if (!controller) controller = current;
      else {
        errs.push({ field: path, type: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(refs)}: Only one reference can have Controller set to true. Found "true" in references for ${controller} and ${current}` });
      }
    }
  }
  return errs;
}

export function finalizerErrors(meta: KubeObject['metadata']): FieldError[] {
  const finalizers = meta.finalizers ?? [];
  const errs: FieldError[] = [];
  for (const f of finalizers) for (const m of labelKeyErrors(f)) errs.push(fieldInvalid('metadata.finalizers', f, m));
  if (finalizers.includes('orphan') && finalizers.includes('foregroundDeletion')) {
    errs.push({ field: 'metadata.finalizers', type: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(finalizers)}: finalizer orphan and foregroundDeletion cannot be both set` });
  }
  finalizers.forEach((f, i) => {
    if (!f.includes('/') && !STANDARD_FINALIZERS.has(f)) errs.push(fieldInvalid(`metadata.finalizers[${i}]`, f, 'name is neither a standard finalizer name nor is it fully qualified'));
  });
  return errs;
}

/** what an update may not do to metadata the server keeps (uid, deletionTimestamp, finalizers of a deletion) */
export function metaUpdateErrors(old: KubeObject, obj: KubeObject): FieldError[] {
  const errs: FieldError[] = [];
  const was = old.metadata;
  const now = obj.metadata;
  if (was.deletionTimestamp) {
    const added = [...new Set(now.finalizers ?? [])].filter((f) => !(was.finalizers ?? []).includes(f)).sort();
    if (added.length) {
      errs.push(fieldForbidden('metadata.finalizers', `no new finalizers can be added if the object is being deleted, found new finalizers []string{${added.map((f) => JSON.stringify(f)).join(', ')}}`));
    }
  }
  // an empty uid is taken from the stored object, as BeforeUpdate does
  if (now.uid && now.uid !== was.uid) errs.push(fieldInvalid('metadata.uid', now.uid, IMMUTABLE));
  // a deletion starts with DELETE: an update can set no deletionTimestamp (one it changes is put back)
  if (!was.deletionTimestamp && now.deletionTimestamp) {
    errs.push({ field: 'metadata.deletionTimestamp', type: 'FieldValueInvalid', message: `Invalid value: ${goTime(String(now.deletionTimestamp))}: ${IMMUTABLE}` });
  }
  return errs;
}
