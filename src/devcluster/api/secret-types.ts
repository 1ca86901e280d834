// The keys each built-in Secret type must have (pkg/apis/core/validation ValidateSecret): a kubernetes.io/tls
// Secret without tls.key, a dockerconfigjson Secret whose content is no JSON object, are refused at create and
// update, never stored for a pod or an image pull to fail on later.
import type { KubeObject } from '../types.js';
import { fieldInvalid, fieldRequired, type FieldError } from './validation-fields.js';

const REDACTED = '<secret contents redacted>';

/** encoding/json's complaint about a document that is not a JSON object, for the common cases */
function jsonObjectError(text: string): string | undefined {
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) return undefined;
    const goType = Array.isArray(value) ? 'array' : value === null ? undefined : typeof value === 'boolean' ? 'bool' : typeof value;
    return goType ? `json: cannot unmarshal ${goType} into Go value of type map[string]interface {}` : undefined;
  } catch (e) {
    const first = text.trimStart()[0];
    if (first !== undefined && !'{["-0123456789tfn'.includes(first)) return `invalid character '${first}' looking for beginning of value`;
    // V8 names the position it stopped at: at the end, the document was cut short
    const at = /at position (\d+)/.exec((e as Error).message);
    if (first === undefined || /end of JSON/.test((e as Error).message) || (at && Number(at[1]) >= text.trimEnd().length)) return 'unexpected end of JSON input';
    return `invalid JSON: ${(e as Error).message}`;
  }
}

function dockerConfig(data: Record<string, string>, key: string): FieldError[] {
  if (!(key in data)) return [fieldRequired(`data[${key}]`)];
  const problem = jsonObjectError(Buffer.from(data[key] ?? '', 'base64').toString('utf8'));
  return problem ? [fieldInvalid(`data[${key}]`, REDACTED, problem)] : [];
}

/** the errors of a Secret's type-specific keys; `data` has stringData folded in */
export function secretTypeErrors(secret: KubeObject): FieldError[] {
  const data = (secret.data ?? {}) as Record<string, string>;
  const has = (key: string) => Object.hasOwn(data, key);
  switch (secret.type) {
    case 'kubernetes.io/service-account-token':
      return secret.metadata.annotations?.['kubernetes.io/service-account.name'] ? [] : [fieldRequired('metadata.annotations[kubernetes.io/service-account.name]')];
    case 'kubernetes.io/dockercfg':
      return dockerConfig(data, '.dockercfg');
    case 'kubernetes.io/dockerconfigjson':
      return dockerConfig(data, '.dockerconfigjson');
    case 'kubernetes.io/basic-auth':
      return has('username') || has('password') ? [] : [fieldRequired('data[username]'), fieldRequired('data[password]')];
    case 'kubernetes.io/ssh-auth':
      return data['ssh-privatekey'] ? [] : [fieldRequired('data[ssh-privatekey]')];
    case 'kubernetes.io/tls':
      return [...(has('tls.crt') ? [] : [fieldRequired('data[tls.crt]')]), ...(has('tls.key') ? [] : [fieldRequired('data[tls.key]')])];
    default:
      return [];
  }
}
