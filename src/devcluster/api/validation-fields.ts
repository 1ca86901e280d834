// field.Error constructors with the error types and sentences of the real API server: `message` is Go's
// ErrorBody() for the value.

export interface FieldError {
  field: string;
  type: string;
  message: string;
}

const quote = (v: unknown): string => (typeof v === 'string' ? JSON.stringify(v) : JSON.stringify(v) ?? String(v));

export const fieldRequired = (field: string, detail = ''): FieldError => ({ field, type: 'FieldValueRequired', message: detail ? `Required value: ${detail}` : 'Required value' });
export const fieldInvalid = (field: string, value: unknown, detail: string): FieldError => ({ field, type: 'FieldValueInvalid', message: `Invalid value: ${quote(value)}: ${detail}` });
export const fieldDuplicate = (field: string, value: unknown): FieldError => ({ field, type: 'FieldValueDuplicate', message: `Duplicate value: ${quote(value)}` });
export const fieldNotFound = (field: string, value: unknown): FieldError => ({ field, type: 'FieldValueNotFound', message: `Not found: ${quote(value)}` });
export const fieldNotSupported = (field: string, value: unknown, supported: string[]): FieldError => ({
  field,
  type: 'FieldValueNotSupported',
  message: `Unsupported value: ${quote(value)}: supported values: ${supported.map((s) => JSON.stringify(s)).join(', ')}`,
});
export const fieldForbidden = (field: string, detail: string): FieldError => ({ field, type: 'FieldValueForbidden', message: `Forbidden: ${detail}` });
export const fieldTooLong = (field: string, max: number): FieldError => ({ field, type: 'FieldValueTooLong', message: `Too long: must have at most ${max} bytes` });
