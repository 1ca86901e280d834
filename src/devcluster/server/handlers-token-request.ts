// The TokenRequest API, `POST /api/v1/namespaces/NS/serviceaccounts/NAME/token` (`kubectl create token`), as
// the real serviceaccounts/token registry (pkg/registry/core/serviceaccount/storage/token.go) answers it.
// The node asks the same function for the tokens of projected volumes, as the kubelet asks the API.
import { ApiError, badRequest, invalid } from '../api/errors.js';
import { resourceByKind } from '../api/resources.js';
import type { KubeObject, ObjectStore, ResourceType } from '../types.js';
import { decodeObjectBody, readBody } from './body.js';
import { sendJson, type ResourceRequest, type ServerContext } from './handlers-context.js';
import {
  API_AUDIENCES,
  EXTENDED_EXPIRATION_SECONDS,
  WARN_ONLY_EXPIRATION_SECONDS,
  type ServiceAccountTokens,
  type TokenSubject,
} from './service-account-tokens.js';

const GROUP = 'authentication.k8s.io';
const API_VERSION = `${GROUP}/v1`;
/** SetDefaults_TokenRequestSpec */
const DEFAULT_EXPIRATION_SECONDS = 3600;
const MIN_EXPIRATION_SECONDS = 600;
const MAX_EXPIRATION_SECONDS = 2 ** 32;

/** TokenRequest as the errors name it (the kind is served as a subresource, not a resource of its own) */
const TOKEN_REQUEST: ResourceType = { group: GROUP, version: 'v1', kind: 'TokenRequest', listKind: '', plural: 'tokenrequests', singular: 'tokenrequest', namespaced: true, verbs: ['create'] };

export interface BoundObjectReference {
  kind?: string;
  apiVersion?: string;
  name?: string;
  uid?: string;
}

export interface TokenRequestSpec {
  audiences?: string[];
  expirationSeconds?: number;
  boundObjectRef?: BoundObjectReference | null;
}

export interface IssuedToken {
  /** the spec as defaulted */
  spec: { audiences: string[]; expirationSeconds: number; boundObjectRef: BoundObjectReference | null };
  token: string;
  /** now + the requested expiration (a pod-bound 3607 s token itself lasts a year) */
  expirationTimestamp: string;
  creationTimestamp: string;
}

const rfc3339 = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

function invalidSpec(field: string, value: unknown, why: string): ApiError {
  return invalid(TOKEN_REQUEST, '', [{ field, type: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(value)}: ${why}` }]);
}

/** the group of an apiVersion ("v1" → "", "apps/v1" → "apps"), as schema.FromAPIVersionAndKind parses it */
const groupOf = (apiVersion: string | undefined) => (apiVersion && apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '');

/** what the registry's Create does after decoding: checks, binding, the expiration rules, signing */
export function issueTokenRequest(store: ObjectStore, tokens: ServiceAccountTokens, namespace: string, name: string, given: TokenRequestSpec): IssuedToken {
  const sa = store.get(resourceByKind('ServiceAccount'), namespace, name);
  const audiences = Array.isArray(given.audiences) && given.audiences.length > 0 ? given.audiences.map(String) : [...API_AUDIENCES];
  const expirationSeconds = given.expirationSeconds ?? DEFAULT_EXPIRATION_SECONDS;
  if (typeof expirationSeconds !== 'number' || !Number.isInteger(expirationSeconds)) throw badRequest('spec.expirationSeconds must be an integer');
  if (expirationSeconds < MIN_EXPIRATION_SECONDS) throw invalidSpec('spec.expirationSeconds', expirationSeconds, 'may not specify a duration less than 10 minutes');
  if (expirationSeconds > MAX_EXPIRATION_SECONDS) throw invalidSpec('spec.expirationSeconds', expirationSeconds, 'may not specify a duration larger than 2^32 seconds');
  const nowMs = Date.now();

  const subject: TokenSubject = { namespace, serviceAccount: { name, uid: sa.metadata.uid ?? '' } };
  const ref = given.boundObjectRef ?? null;
  let pod: KubeObject | undefined;
  if (ref) {
    const group = groupOf(ref.apiVersion);
    let bound: KubeObject;
    if (group === '' && ref.kind === 'Pod') {
      pod = bound = store.get(resourceByKind('Pod'), namespace, String(ref.name ?? ''));
      if (name !== pod.spec?.serviceAccountName) throw badRequest(`cannot bind token for serviceaccount "${name}" to pod running with different serviceaccount name.`);
      subject.pod = { name: pod.metadata.name!, uid: pod.metadata.uid ?? '' };
      // ServiceAccountTokenPodNodeInfo: the pod's node, by name even when the Node object is gone
      const nodeName: string | undefined = pod.spec?.nodeName;
      if (nodeName) subject.node = { name: nodeName, uid: store.tryGet(resourceByKind('Node'), undefined, nodeName)?.metadata.uid ?? '' };
    } else if (group === '' && ref.kind === 'Secret') {
      bound = store.get(resourceByKind('Secret'), namespace, String(ref.name ?? ''));
      subject.secret = { name: bound.metadata.name!, uid: bound.metadata.uid ?? '' };
    } else {
      // Node-bound tokens (ServiceAccountTokenNodeBinding) are for node agents, which the dev cluster has none of
      const version = ref.apiVersion?.includes('/') ? ref.apiVersion.slice(ref.apiVersion.indexOf('/') + 1) : (ref.apiVersion ?? '');
      throw badRequest(`cannot bind token to object of type ${group}/${version}, Kind=${ref.kind ?? ''}${ref.kind === 'Node' ? ' (the dev cluster does not bind tokens to Nodes)' : ''}`);
    }
    if (ref.uid && ref.uid !== bound.metadata.uid) {
      throw new ApiError(
        409,
        'Conflict',
        `Operation cannot be fulfilled on ${ref.kind} "${ref.name}": the UID in the bound object reference (${ref.uid}) does not match the UID in record. The object might have been deleted and then recreated`,
        { name: ref.name, kind: ref.kind },
      );
    }
  }

  // the safe transition of projected tokens: a pod-bound token asked for 3607 s for the API server itself lasts a
  // year, and says when it should have been refreshed (warnafter)
  let lifetime = expirationSeconds;
  let warnAfterSeconds: number | undefined;
  if (pod && expirationSeconds === WARN_ONLY_EXPIRATION_SECONDS && audiences.every((a) => API_AUDIENCES.includes(a))) {
    warnAfterSeconds = expirationSeconds;
    lifetime = EXTENDED_EXPIRATION_SECONDS;
  }
  const { token } = tokens.issue(subject, { audiences, expirationSeconds: lifetime, warnAfterSeconds, now: Math.floor(nowMs / 1000) });
  return {
    spec: { audiences, expirationSeconds, boundObjectRef: ref },
    token,
    expirationTimestamp: rfc3339(Math.floor(nowMs / 1000) * 1000 + expirationSeconds * 1000),
    creationTimestamp: rfc3339(nowMs),
  };
}

export async function handleTokenRequest(ctx: ServerContext, r: ResourceRequest): Promise<void> {
  const { namespace, name } = r.route;
  const body = decodeObjectBody(await readBody(r.req, ctx.maxBodyBytes), r.req.headers['content-type']);
  if (body.apiVersion !== undefined && body.apiVersion !== API_VERSION) {
    throw badRequest(`the API version in the data (${body.apiVersion}) does not match the expected API version (${API_VERSION})`);
  }
  if (body.kind !== undefined && body.kind !== 'TokenRequest') throw badRequest(`the kind in the data (${body.kind}) does not match the expected kind (TokenRequest)`);
  const meta = body.metadata && typeof body.metadata === 'object' ? body.metadata : {};
  if (meta.name && meta.name !== name) {
    throw invalid(TOKEN_REQUEST, name!, [{ field: 'metadata.name', type: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(meta.name)}: must match the service account name if specified` }]);
  }
  if (meta.namespace && meta.namespace !== namespace) {
    throw invalid(TOKEN_REQUEST, name!, [
      { field: 'metadata.namespace', type: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(meta.namespace)}: must match the service account namespace if specified` },
    ]);
  }
  if (!ctx.serviceAccountTokens) throw new ApiError(503, 'ServiceUnavailable', 'this dev cluster was started without a service account signing key');
  const spec = body.spec && typeof body.spec === 'object' ? (body.spec as TokenRequestSpec) : {};
  const issued = issueTokenRequest(ctx.store, ctx.serviceAccountTokens, namespace!, name!, spec);
  sendJson(r.res, 201, {
    kind: 'TokenRequest',
    apiVersion: API_VERSION,
    metadata: { name, namespace, creationTimestamp: issued.creationTimestamp },
    spec: issued.spec,
    status: { token: issued.token, expirationTimestamp: issued.expirationTimestamp },
  });
}
