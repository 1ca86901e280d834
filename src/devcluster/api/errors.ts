// Errors shaped as the real API server shapes them: a metav1.Status body with code, reason and details.
import type { ResourceType } from '../types.js';

export interface StatusCause {
  reason?: string;
  message?: string;
  field?: string;
}

export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
}

export interface Status {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, unknown>;
  status: 'Failure' | 'Success';
  message?: string;
  reason?: string;
  details?: StatusDetails;
  code: number;
}

export class ApiError extends Error {
  constructor(
    readonly code: number,
    readonly reason: string,
    message: string,
    readonly details?: StatusDetails,
  ) {
    super(message);
  }

  toStatus(): Status {
    const s: Status = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: this.message, code: this.code };
    // an error the real server does not classify (StatusReasonUnknown) has no reason at all
    if (this.reason) s.reason = this.reason;
    if (this.details) s.details = this.details;
    return s;
  }
}

/** "pods" or "leases.coordination.k8s.io", as messages name a resource */
export function qualifiedResource(rt: ResourceType): string {
  return rt.group ? `${rt.plural}.${rt.group}` : rt.plural;
}

function details(rt: ResourceType, name?: string): StatusDetails {
  const d: StatusDetails = { kind: rt.plural };
  if (name !== undefined) d.name = name;
  if (rt.group) d.group = rt.group;
  return d;
}

export const notFound = (rt: ResourceType, name: string) =>
  new ApiError(404, 'NotFound', `${qualifiedResource(rt)} "${name}" not found`, details(rt, name));

export const alreadyExists = (rt: ResourceType, name: string) =>
  new ApiError(409, 'AlreadyExists', `${qualifiedResource(rt)} "${name}" already exists`, details(rt, name));

export const conflict = (rt: ResourceType, name: string, why = 'the object has been modified; please apply your changes to the latest version and try again') =>
  new ApiError(409, 'Conflict', `Operation cannot be fulfilled on ${qualifiedResource(rt)} "${name}": ${why}`, details(rt, name));

/** 422: `Pod "x" is invalid: spec.containers[0].image: Required value` */
export function invalid(rt: ResourceType, name: string, causes: { field: string; type: string; message: string }[]): ApiError {
  return invalidKind(rt.kind, rt.group, name, { ...details(rt, name), kind: rt.kind }, causes.map((c) => ({ reason: c.type, message: c.message, field: c.field })));
}

/** 422 for a request's options, which are no served resource: `ListOptions.meta.k8s.io "" is invalid: …` */
export function invalidOptions(kind: string, group: string | undefined, name: string, causes: Array<{ reason: string; message: string; field: string }>): ApiError {
  return invalidKind(kind, group, name, { ...(name ? { name } : {}), ...(group ? { group } : {}), kind }, causes);
}

/** errors.NewInvalid's sentence: every cause as `field: message`, a list in brackets when there are several */
function invalidKind(kind: string, group: string | undefined, name: string, d: StatusDetails, causes: Array<{ reason: string; message: string; field: string }>): ApiError {
  const text = causes.map((c) => `${c.field}: ${c.message}`);
  // the qualified kind, as GroupKind.String() writes it: `Pod`, `TokenRequest.authentication.k8s.io`
  const qualified = group ? `${kind}.${group}` : kind;
  return new ApiError(422, 'Invalid', `${qualified} "${name}" is invalid: ${text.length === 1 ? text[0] : `[${text.join(', ')}]`}`, { ...d, causes });
}

export const badRequest = (message: string) => new ApiError(400, 'BadRequest', message);

export const unauthorized = () => new ApiError(401, 'Unauthorized', 'Unauthorized');

export const expired = (message: string) => new ApiError(410, 'Expired', message);

export const methodNotAllowed = (message: string) => new ApiError(405, 'MethodNotAllowed', message);

export const internalError = (message: string) =>
  new ApiError(500, 'InternalError', `Internal error occurred: ${message}`, { causes: [{ message }] });

export const notAcceptable = (message: string) => new ApiError(406, 'NotAcceptable', message);

export const unsupportedMediaType = (message: string) => new ApiError(415, 'UnsupportedMediaType', message);

export const requestEntityTooLarge = (message: string) => new ApiError(413, 'RequestEntityTooLarge', message);

/**
 * 403 with the sentence the real authorizer writes, e.g.
 * `pods "p" is forbidden: User "u" cannot create resource "pods/exec" in API group "" in the namespace "ns"`
 */
export function forbidden(user: string, verb: string, rt: { plural: string; group: string }, subresource: string | undefined, namespace: string | undefined, name?: string): ApiError {
  const resource = subresource ? `${rt.plural}/${subresource}` : rt.plural;
  const subject = name ? `${rt.group ? `${rt.plural}.${rt.group}` : rt.plural} "${name}"` : rt.group ? `${rt.plural}.${rt.group}` : rt.plural;
  const scope = namespace ? ` in the namespace "${namespace}"` : ' at the cluster scope';
  const message = `${subject} is forbidden: User "${user}" cannot ${verb} resource "${resource}" in API group "${rt.group}"${scope}`;
  const d: StatusDetails = { kind: rt.plural };
  if (name) d.name = name;
  if (rt.group) d.group = rt.group;
  return new ApiError(403, 'Forbidden', message, d);
}
