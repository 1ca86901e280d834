// The options of a write as apimachinery's ValidateCreateOptions … ValidateDeleteOptions refuse them.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ApiError } from '../../../src/devcluster/api/errors.js';
import { validateDeleteOptions, validateWriteOptions } from '../../../src/devcluster/api/write-options.js';

const q = (s: string) => new URLSearchParams(s);

function refusal(fn: () => void): ApiError {
  try {
    fn();
  } catch (e) {
    if (e instanceof ApiError) return e;
    throw e;
  }
  assert.fail('not refused');
}

test('dryRun is "All" or absent; anything else is a 422 naming the values as a Go []string', () => {
  validateWriteOptions('CreateOptions', q('dryRun=All'));
  validateWriteOptions('CreateOptions', q(''));
  const e = refusal(() => validateWriteOptions('UpdateOptions', q('dryRun=All&dryRun=true')));
  assert.equal(e.code, 422);
  assert.equal(e.message, 'UpdateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: []string{"All", "true"}: supported values: "All"');
  assert.deepEqual(e.details, { group: 'meta.k8s.io', kind: 'UpdateOptions', causes: [{ reason: 'FieldValueNotSupported', field: 'dryRun', message: 'Unsupported value: []string{"All", "true"}: supported values: "All"' }] });
});

test('every problem is listed: a fieldManager too long or unprintable, an unknown fieldValidation, force on a non-apply patch', () => {
  validateWriteOptions('PatchOptions', q(`fieldManager=${'m'.repeat(128)}&fieldValidation=Strict`));
  const e = refusal(() => validateWriteOptions('PatchOptions', q(`force=false&fieldManager=${'m'.repeat(129)}%09&fieldValidation=strict`)));
  assert.deepEqual(
    e.details?.causes?.map((c) => `${c.field}: ${c.message}`),
    [
      'force: Forbidden: may not be specified for non-apply patch',
      'fieldManager: Too long: must have at most 128 bytes',
      `fieldManager: Invalid value: "${'m'.repeat(129)}\\t": invalid character U+0009 (at position 129)`,
      'fieldValidation: Unsupported value: "strict": supported values: "", "Ignore", "Strict", "Warn"',
    ],
  );
  assert.match(e.message, /^PatchOptions\.meta\.k8s\.io "" is invalid: \[force: Forbidden/);
});

test('delete options: a known propagation policy, not beside orphanDependents; dryRun as for writes', () => {
  validateDeleteOptions({ propagationPolicy: 'Foreground', dryRun: ['All'] });
  validateDeleteOptions({ orphanDependents: true, dryRun: [] });
  assert.equal(
    refusal(() => validateDeleteOptions({ propagationPolicy: 'background', dryRun: [] })).message,
    'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: "background": supported values: "Foreground", "Background", "Orphan", "nil"',
  );
  assert.equal(
    refusal(() => validateDeleteOptions({ propagationPolicy: 'Orphan', orphanDependents: false, dryRun: [] })).message,
    'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Invalid value: "Orphan": orphanDependents and deletionPropagation cannot be both set',
  );
  assert.equal(refusal(() => validateDeleteOptions({ dryRun: ['all'] })).code, 422);
});
