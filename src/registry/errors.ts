/**
 * What a registry's refusal means to the user: which registry refused what, its own error body
 * (the distribution spec's `{"errors":[{code, message, detail}]}`), and what to do next.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { FetchError } from './http.js';
import { loginCommand } from './credentials.js';

export class RegistryError extends FetchError {
  constructor(
    message: string,
    status?: number,
    readonly registry?: string,
  ) {
    super(message, status);
    this.name = 'RegistryError';
  }
}

/** `UNAUTHORIZED: authentication required` from the error body; the raw start of any other body. */
export function registryErrorText(body: Buffer, headers: IncomingHttpHeaders = {}): string {
  const text = body.toString('utf8').trim();
  try {
    const doc = JSON.parse(text) as { errors?: Array<{ code?: string; message?: string }>; details?: string; error?: string };
    if (Array.isArray(doc.errors) && doc.errors.length) return doc.errors.map((e) => [e.code, e.message].filter(Boolean).join(': ')).join('; ');
    if (doc.details || doc.error) return String(doc.details ?? doc.error);
  } catch {
    /* not JSON: shown as it is */
  }
  if (text) return text.slice(0, 200);
  const challenge = headers['www-authenticate'];
  return challenge ? `challenge ${Array.isArray(challenge) ? challenge.join(', ') : challenge}` : 'no details';
}

export interface RefusalContext {
  registry: string;
  /** `pull catalogs/x` or `push catalogs/x`. */
  what: string;
  /** Where the credentials that were refused came from; undefined when the request was anonymous. */
  credentialSource?: string;
}

/** The sentence for a 401/403/404: who refused, the registry's words, and what to do. */
export function refusal(status: number, detail: string, ctx: RefusalContext): RegistryError {
  const login = loginCommand(ctx.registry);
  let advice: string;
  if (status === 401)
    advice = ctx.credentialSource ? `the credentials from ${ctx.credentialSource} were not accepted: run ${login} again` : `it needs credentials: run ${login}`;
  else if (status === 403)
    advice = ctx.credentialSource
      ? `the account from ${ctx.credentialSource} may not ${ctx.what}: ask for access, or ${login} as another user`
      : `it needs credentials: run ${login}`;
  else advice = ctx.credentialSource ? 'check the name' : `check the name; if the repository is private, run ${login}`;
  return new RegistryError(`registry ${ctx.registry} refused to ${ctx.what} (answered ${status}: ${detail}): ${advice}`, status, ctx.registry);
}
