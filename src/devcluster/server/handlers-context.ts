// What every handler receives: the server's parts, the caller and the parsed request, plus the few
// response helpers that keep every answer a JSON object or a Status.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError, internalError } from '../api/errors.js';
import type { Faults, NodeRuntime, ObjectStore, RequestAttributes, UserInfo } from '../types.js';
import type { ResourceRoute } from './handlers-route.js';
import type { PolicyRule } from './rbac.js';
import type { ServiceAccountTokens } from './service-account-tokens.js';

export { queryBool } from '../api/query-bool.js';

/** what ApiServer needs of server/auth.ts's TokenAuthenticator */
export interface Authenticator {
  authenticate(authorizationHeader: string | undefined): UserInfo | undefined;
}

/** what ApiServer needs of server/rbac.ts's RbacAuthorizer */
export interface Authorizer {
  authorize(user: UserInfo, attrs: RequestAttributes): { allowed: boolean; reason?: string };
  /** the RBAC rules that apply to the user in a namespace (SelfSubjectRulesReview) */
  rulesFor(user: UserInfo, namespace: string): PolicyRule[];
}

/** in-process hooks the delete handler and the controllers share */
export interface DeletionHooks {
  /** dependents of this uid keep living (propagationPolicy Orphan): their owner reference is dropped instead */
  orphan(uid: string): void;
}

export interface ServerContext {
  store: ObjectStore;
  node: NodeRuntime;
  faults: Faults;
  authorizer: Authorizer;
  maxBodyBytes: number;
  allocateClusterIp(): string;
  /** the node ports the stored Services hold, but for the one of this uid */
  nodePortsInUse(exceptUid?: string): Set<number>;
  deletion: DeletionHooks;
  /** watches and log streams in flight, ended by close() */
  liveStreams: Set<() => void>;
  /** the service account signing key, for the TokenRequest API */
  serviceAccountTokens?: ServiceAccountTokens;
}

export interface ResourceRequest {
  req: IncomingMessage;
  res: ServerResponse;
  url: URL;
  user: UserInfo;
  route: ResourceRoute;
  verb: string;
}

export function sendJson(res: ServerResponse, code: number, body: unknown, contentType = 'application/json'): void {
  const text = JSON.stringify(body);
  res.writeHead(code, {
    'Content-Type': contentType,
    'Content-Length': Buffer.byteLength(text),
    'Cache-Control': 'no-cache, private',
  });
  res.end(text);
}

export function sendText(res: ServerResponse, code: number, text: string): void {
  res.writeHead(code, { 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': Buffer.byteLength(text), 'X-Content-Type-Options': 'nosniff' });
  res.end(text);
}

/** every failure becomes a Status; anything that is not an ApiError is a 500 and is logged */
export function toApiError(e: unknown): ApiError {
  if (e instanceof ApiError) return e;
  process.stderr.write(`devcluster apiserver: unexpected error: ${(e as Error)?.stack ?? String(e)}\n`);
  return internalError((e as Error)?.message ?? String(e));
}

export function sendError(res: ServerResponse, e: unknown): void {
  const err = toApiError(e);
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const headers: Record<string, string> = {};
  if (err.details?.retryAfterSeconds !== undefined) headers['Retry-After'] = String(err.details.retryAfterSeconds);
  for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
  sendJson(res, err.code, err.toStatus());
}

export const TABLE_CONTENT_TYPE = 'application/json;as=Table;v=v1;g=meta.k8s.io';

/** true when the Accept header asks for a meta.k8s.io Table (kubectl get) */
export function wantsTable(accept: string | undefined): boolean {
  if (!accept) return false;
  return accept.split(',').some((range) => {
    const params = range.split(';').map((p) => p.trim());
    return params.includes('as=Table') && params.includes('g=meta.k8s.io') && (params.includes('v=v1') || params.includes('v=v1beta1'));
  });
}

export function queryInt(q: URLSearchParams, name: string): number | undefined {
  const v = q.get(name);
  if (v === null || v === '') return undefined;
  const n = Number(v);
  return Number.isFinite(n) ? Math.trunc(n) : undefined;
}
