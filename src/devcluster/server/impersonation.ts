// Impersonation (`kubectl --as/--as-group/--as-uid`, the Impersonate-* headers) as kube-apiserver's
// WithImpersonation filter does it: every requested user, service account, group, uid and extra value is
// authorized as the `impersonate` verb for the caller, then the request runs as the impersonated user.
import type { IncomingMessage } from 'node:http';
import { ApiError, forbidden, internalError } from '../api/errors.js';
import type { RequestAttributes, UserInfo } from '../types.js';
import type { Authorizer } from './handlers-context.js';

const USER_HEADER = 'impersonate-user';
const GROUP_HEADER = 'impersonate-group';
const UID_HEADER = 'impersonate-uid';
const EXTRA_PREFIX = 'impersonate-extra-';
const AUTHENTICATED = 'system:authenticated';
const UNAUTHENTICATED = 'system:unauthenticated';
const ANONYMOUS = 'system:anonymous';
const AUTHENTICATION_GROUP = 'authentication.k8s.io';

/** one thing the caller asks to act as, with the RBAC attributes the real filter checks for it */
interface ImpersonationRequest {
  kind: 'User' | 'ServiceAccount' | 'Group' | 'UserExtra' | 'UID';
  name: string;
  namespace?: string;
  /** UserExtra: the extra key (checked as the subresource of userextras) */
  extraKey?: string;
}

const RESOURCES: Record<ImpersonationRequest['kind'], { resource: string; apiGroup: string }> = {
  User: { resource: 'users', apiGroup: '' },
  ServiceAccount: { resource: 'serviceaccounts', apiGroup: '' },
  Group: { resource: 'groups', apiGroup: '' },
  UserExtra: { resource: 'userextras', apiGroup: AUTHENTICATION_GROUP },
  UID: { resource: 'uids', apiGroup: AUTHENTICATION_GROUP },
};

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** `system:serviceaccount:NS:NAME` with a valid namespace and name, as serviceaccount.SplitUsername accepts it */
function splitServiceAccount(user: string): { namespace: string; name: string } | undefined {
  const prefix = 'system:serviceaccount:';
  if (!user.startsWith(prefix)) return undefined;
  const parts = user.slice(prefix.length).split(':');
  if (parts.length !== 2) return undefined;
  const [namespace, name] = parts as [string, string];
  if (namespace.length > 63 || !DNS_LABEL.test(namespace) || name.length > 253 || !DNS_SUBDOMAIN.test(name)) return undefined;
  return { namespace, name };
}

/** header values one by one, however many times the header was sent */
function values(req: IncomingMessage, header: string): string[] {
  return req.headersDistinct[header] ?? [];
}

/** Go's fmt %v of the v1.ObjectReference the real server builds, for its error message */
function describe(r: ImpersonationRequest): string {
  const apiVersion = r.kind === 'UserExtra' || r.kind === 'UID' ? `${AUTHENTICATION_GROUP}/v1` : '';
  return `{${r.kind} ${r.namespace ?? ''} ${r.name}  ${apiVersion}  ${r.extraKey ?? ''}}`;
}

function unescapeExtraKey(key: string): string {
  try {
    return decodeURIComponent(key);
  } catch {
    return key;
  }
}

/** what the Impersonate-* headers ask for; a 500 (as the real server answers) for groups, extras or a uid without a user */
export function impersonationRequests(req: IncomingMessage): ImpersonationRequest[] {
  const requests: ImpersonationRequest[] = [];
  const user = values(req, USER_HEADER)[0] ?? '';
  if (user !== '') {
    const sa = splitServiceAccount(user);
    requests.push(sa ? { kind: 'ServiceAccount', ...sa } : { kind: 'User', name: user });
  }
  for (const group of values(req, GROUP_HEADER)) requests.push({ kind: 'Group', name: group });
  for (const header of Object.keys(req.headersDistinct)) {
    if (!header.startsWith(EXTRA_PREFIX)) continue;
    const extraKey = unescapeExtraKey(header.slice(EXTRA_PREFIX.length));
    for (const value of values(req, header)) requests.push({ kind: 'UserExtra', name: value, extraKey });
  }
  const uid = values(req, UID_HEADER)[0] ?? '';
  if (uid !== '') requests.push({ kind: 'UID', name: uid });
  if (requests.length > 0 && user === '') {
    throw internalError(`requested [${requests.map(describe).join(' ')}] without impersonating a user`);
  }
  return requests;
}

function attributesOf(r: ImpersonationRequest): RequestAttributes {
  const { resource, apiGroup } = RESOURCES[r.kind];
  const attrs: RequestAttributes = { verb: 'impersonate', apiGroup, resource, name: r.name };
  if (r.namespace) attrs.namespace = r.namespace;
  if (r.extraKey !== undefined) attrs.subresource = r.extraKey;
  return attrs;
}

function forbiddenImpersonation(requestor: UserInfo, attrs: RequestAttributes, reason: string | undefined): ApiError {
  const err = forbidden(requestor.name, 'impersonate', { plural: attrs.resource, group: attrs.apiGroup }, attrs.subresource, attrs.namespace, attrs.name);
  if (reason) err.message = `${err.message}: ${reason}`;
  return err;
}

/** The user the request runs as: the requestor itself, or whom it may impersonate; 403 for anything it may not. */
export function impersonate(requestor: UserInfo, req: IncomingMessage, authorizer: Authorizer): UserInfo {
  const requests = impersonationRequests(req);
  if (requests.length === 0) return requestor;
  const groupsSpecified = values(req, GROUP_HEADER).length > 0;
  let name = '';
  let uid: string | undefined;
  let groups: string[] = [];
  const extra: Record<string, string[]> = {};
  for (const r of requests) {
    const attrs = attributesOf(r);
    const decision = authorizer.authorize(requestor, attrs);
    if (!decision.allowed) throw forbiddenImpersonation(requestor, attrs, decision.reason);
    if (r.kind === 'User') name = r.name;
    else if (r.kind === 'ServiceAccount') {
      name = `system:serviceaccount:${r.namespace}:${r.name}`;
      if (!groupsSpecified) groups = ['system:serviceaccounts', `system:serviceaccounts:${r.namespace}`];
    } else if (r.kind === 'Group') groups.push(r.name);
    else if (r.kind === 'UID') uid = r.name;
    else (extra[r.extraKey!] ??= []).push(r.name);
  }
  // the real filter adds system:authenticated (system:unauthenticated for anonymous) unless either is named
  if (!groups.includes(AUTHENTICATED) && !groups.includes(UNAUTHENTICATED)) groups.push(name === ANONYMOUS ? UNAUTHENTICATED : AUTHENTICATED);
  const user: UserInfo = { name, groups };
  if (uid !== undefined) user.uid = uid;
  if (Object.keys(extra).length > 0) user.extra = extra;
  return user;
}
