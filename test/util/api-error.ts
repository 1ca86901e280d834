/**
 * The one "expect an ApiError" of the dev cluster's tests. The error is checked with assert.throws'
 * object form: every property given (code, reason, message as text or RegExp) must match; it is
 * returned for checks beyond those (details, causes).
 */
import assert from 'node:assert/strict';
import { ApiError } from '../../src/devcluster/api/errors.js';

export interface ExpectedApiError {
  code?: number;
  reason?: string;
  message?: string | RegExp;
}

function checked(err: unknown, expected: ExpectedApiError): ApiError {
  assert.ok(err instanceof ApiError, `expected an ApiError, got ${String(err)}`);
  const given = Object.fromEntries(Object.entries(expected).filter(([, v]) => v !== undefined));
  if (Object.keys(given).length > 0) {
    assert.throws(() => {
      throw err;
    }, given);
  }
  return err;
}

/** The ApiError `fn` throws. */
export function thrownApiError(fn: () => unknown, expected: ExpectedApiError = {}): ApiError {
  try {
    fn();
  } catch (err) {
    return checked(err, expected);
  }
  assert.fail(`expected an ApiError ${JSON.stringify(expected)}`);
}

/** The ApiError `p` rejects with. */
export async function rejectedApiError(p: Promise<unknown>, expected: ExpectedApiError = {}): Promise<ApiError> {
  try {
    await p;
  } catch (err) {
    return checked(err, expected);
  }
  assert.fail(`expected an ApiError ${JSON.stringify(expected)}`);
}
