// Service account tokens as kube-apiserver issues and checks them (pkg/serviceaccount). Bound tokens: a JWT with
// the standard claims and a `kubernetes.io` claim naming the namespace, the ServiceAccount and the object the
// token is bound to; accepted only while that ServiceAccount (same uid) and bound object still exist. Legacy
// tokens (the `token` of a kubernetes.io/service-account-token Secret): no expiry, valid while the Secret holds
// exactly that token and the ServiceAccount lives.
import { createHash, generateKeyPairSync, randomUUID, timingSafeEqual, type KeyObject } from 'node:crypto';
import type { UserInfo } from '../types.js';
import { keyId, looksLikeJwt, publicKeyOf, signJwt, verifyJwt } from './jwt.js';

/** the real server's default --service-account-issuer for a cluster whose domain is cluster.local */
export const ISSUER = 'https://kubernetes.default.svc.cluster.local';
/** the issuer of Secret-based tokens (LegacyIssuer) */
export const LEGACY_ISSUER = 'kubernetes/serviceaccount';
const LEGACY = 'kubernetes.io/serviceaccount/';
/** --api-audiences defaults to the issuer */
export const API_AUDIENCES: readonly string[] = [ISSUER];
/** what the ServiceAccount admission plugin asks for; the server extends such pod-bound tokens (WarnOnlyBoundTokenExpirationSeconds) */
export const WARN_ONLY_EXPIRATION_SECONDS = 3607;
/** ExpirationExtensionSeconds: one year */
export const EXTENDED_EXPIRATION_SECONDS = 365 * 24 * 60 * 60;
/** go-jose's DefaultLeeway, which the validator allows on exp, nbf and iat and on deletions */
export const LEEWAY_SECONDS = 60;

const USERNAME_PREFIX = 'system:serviceaccount:';
const EXTRA = 'authentication.kubernetes.io/';

export interface ObjectRef {
  name: string;
  uid: string;
}

/** whom a token names and what it is bound to (at most one of pod and secret; node comes with a pod) */
export interface TokenSubject {
  namespace: string;
  serviceAccount: ObjectRef;
  pod?: ObjectRef;
  secret?: ObjectRef;
  node?: ObjectRef;
}

export interface IssueOptions {
  audiences: readonly string[];
  /** validity of the token (exp - iat) */
  expirationSeconds: number;
  /** when set, the `warnafter` claim: the validity the caller asked for, of a token extended beyond it */
  warnAfterSeconds?: number;
  /** seconds since the epoch; default now */
  now?: number;
  jti?: string;
}

export const serviceAccountUsername = (namespace: string, name: string) => `${USERNAME_PREFIX}${namespace}:${name}`;

/** the claims, top-level keys sorted as Go's encoder writes the merged claim map */
export function tokenClaims(subject: TokenSubject, opts: IssueOptions): Record<string, unknown> {
  const now = opts.now ?? Math.floor(Date.now() / 1000);
  const k8s: Record<string, unknown> = { namespace: subject.namespace, serviceaccount: { ...subject.serviceAccount } };
  if (subject.pod) {
    k8s.pod = { ...subject.pod };
    if (subject.node) k8s.node = { ...subject.node };
  } else if (subject.secret) {
    k8s.secret = { ...subject.secret };
  }
  if (opts.warnAfterSeconds) k8s.warnafter = now + opts.warnAfterSeconds;
  return {
    aud: [...opts.audiences],
    exp: now + opts.expirationSeconds,
    iat: now,
    iss: ISSUER,
    jti: opts.jti ?? randomUUID(),
    'kubernetes.io': k8s,
    nbf: now,
    sub: serviceAccountUsername(subject.namespace, subject.serviceAccount.name),
  };
}

/** the current state of an object a token names: its uid and deletionTimestamp */
export interface LiveObject {
  uid?: string;
  deletionTimestamp?: string;
  /** a Secret's data.token, decoded */
  token?: string;
  /** a Secret's labels (kubernetes.io/legacy-token-invalid-since) */
  labels?: Record<string, string>;
}

/** how the validator finds the objects a token names, now */
export interface TokenLookup {
  serviceAccount(namespace: string, name: string): LiveObject | undefined;
  pod(namespace: string, name: string): LiveObject | undefined;
  secret(namespace: string, name: string): LiveObject | undefined;
}

export type Validation = { user: UserInfo } | { error: string };

const isRef = (v: unknown): v is ObjectRef => !!v && typeof v === 'object' && typeof (v as ObjectRef).name === 'string';
const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

/** deleted before now - leeway: the validator's invalidIfDeletedBefore */
function deletedBefore(obj: LiveObject, limitMs: number): boolean {
  return obj.deletionTimestamp !== undefined && Date.parse(obj.deletionTimestamp) < limitMs;
}

/**
 * The checks of the JWT authenticator and the service account validator, in their order: issuer, audiences,
 * exp/nbf/iat with a minute's leeway, the ServiceAccount (same uid, not deleted), the bound Secret or Pod.
 * The errors are the real server's (it logs them and answers 401).
 */
export function validateClaims(claims: Record<string, unknown>, lookup: TokenLookup, opts: { now?: number; audiences?: readonly string[] } = {}): Validation {
  const now = opts.now ?? Math.floor(Date.now() / 1000);
  const audiences = opts.audiences ?? API_AUDIENCES;
  if (claims.iss !== ISSUER) return { error: 'token issuer is not the cluster' };
  const aud = typeof claims.aud === 'string' ? [claims.aud] : Array.isArray(claims.aud) ? claims.aud.filter((a): a is string => typeof a === 'string') : [];
  if (!aud.some((a) => audiences.includes(a))) return { error: `token audiences ${JSON.stringify(aud)} is invalid for the target audiences ${JSON.stringify(audiences)}` };
  const exp = num(claims.exp);
  const nbf = num(claims.nbf);
  const iat = num(claims.iat);
  if (exp !== undefined && now - LEEWAY_SECONDS > exp) return { error: 'service account token has expired' };
  if (nbf !== undefined && now + LEEWAY_SECONDS < nbf) return { error: 'service account token is not valid yet' };
  if (iat !== undefined && now + LEEWAY_SECONDS < iat) return { error: 'service account token is issued in the future' };

  const k8s = claims['kubernetes.io'] as Record<string, unknown> | undefined;
  const namespace = k8s?.namespace;
  const saRef = k8s?.serviceaccount;
  if (typeof namespace !== 'string' || !isRef(saRef)) return { error: 'token has no service account claims' };
  if (claims.sub !== serviceAccountUsername(namespace, saRef.name)) return { error: 'token subject does not name its service account' };
  const limitMs = (now - LEEWAY_SECONDS) * 1000;

  const sa = lookup.serviceAccount(namespace, saRef.name);
  if (!sa) return { error: `serviceaccounts "${saRef.name}" not found` };
  if (sa.uid !== saRef.uid) return { error: `service account UID (${sa.uid}) does not match claim (${saRef.uid})` };
  if (deletedBefore(sa, limitMs)) return { error: `service account ${namespace}/${saRef.name} has been deleted` };

  const secretRef = k8s!.secret;
  if (isRef(secretRef)) {
    const secret = lookup.secret(namespace, secretRef.name);
    if (!secret) return { error: 'service account token has been invalidated' };
    if (secret.uid !== secretRef.uid) return { error: `secret UID (${secret.uid}) does not match service account secret ref claim (${secretRef.uid})` };
    if (deletedBefore(secret, limitMs)) return { error: 'service account token has been invalidated' };
  }
  const extra: Record<string, string[]> = {};
  const podRef = k8s!.pod;
  if (isRef(podRef)) {
    const pod = lookup.pod(namespace, podRef.name);
    if (!pod) return { error: 'service account token has been invalidated' };
    if (pod.uid !== podRef.uid) return { error: `pod UID (${pod.uid}) does not match service account pod ref claim (${podRef.uid})` };
    if (deletedBefore(pod, limitMs)) return { error: 'service account token has been invalidated' };
    extra[`${EXTRA}pod-name`] = [podRef.name];
    extra[`${EXTRA}pod-uid`] = [podRef.uid];
    const nodeRef = k8s!.node;
    if (isRef(nodeRef)) {
      extra[`${EXTRA}node-name`] = [nodeRef.name];
      if (nodeRef.uid) extra[`${EXTRA}node-uid`] = [nodeRef.uid];
    }
  } else if (isRef(k8s!.node)) {
    // a token bound to a Node alone: the dev cluster issues none, so it cannot be one of ours
    return { error: 'token is bound to a Node object, which the dev cluster does not issue' };
  }
  if (typeof claims.jti === 'string' && claims.jti) extra[`${EXTRA}credential-id`] = [`JTI=${claims.jti}`];

  // ServiceAccountInfo.UserInfo(), then the union authenticator's system:authenticated
  const user: UserInfo = {
    name: serviceAccountUsername(namespace, saRef.name),
    uid: saRef.uid,
    groups: ['system:serviceaccounts', `system:serviceaccounts:${namespace}`, 'system:authenticated'],
  };
  if (Object.keys(extra).length > 0) user.extra = extra;
  return { user };
}

/** the claims of a Secret-based token (LegacyClaims), keys sorted as Go writes them */
export function legacyTokenClaims(namespace: string, serviceAccount: ObjectRef, secretName: string): Record<string, unknown> {
  return {
    iss: LEGACY_ISSUER,
    [`${LEGACY}namespace`]: namespace,
    [`${LEGACY}secret.name`]: secretName,
    [`${LEGACY}service-account.name`]: serviceAccount.name,
    [`${LEGACY}service-account.uid`]: serviceAccount.uid,
    sub: serviceAccountUsername(namespace, serviceAccount.name),
  };
}

const sameText = (a: string, b: string) => timingSafeEqual(createHash('sha256').update(a).digest(), createHash('sha256').update(b).digest());

/** the legacy validator: the Secret still holds this very token, the ServiceAccount is the one it was made for */
export function validateLegacyClaims(claims: Record<string, unknown>, token: string, lookup: TokenLookup): Validation {
  const namespace = claims[`${LEGACY}namespace`];
  const secretName = claims[`${LEGACY}secret.name`];
  const saName = claims[`${LEGACY}service-account.name`];
  const saUid = claims[`${LEGACY}service-account.uid`];
  if (typeof namespace !== 'string' || typeof secretName !== 'string' || typeof saName !== 'string' || typeof saUid !== 'string') {
    return { error: 'token has no legacy service account claims' };
  }
  if (claims.sub !== serviceAccountUsername(namespace, saName)) return { error: 'token subject does not name its service account' };
  const secret = lookup.secret(namespace, secretName);
  if (!secret) return { error: 'token has been invalidated' };
  if (secret.deletionTimestamp) return { error: 'token has been invalidated' };
  if (!secret.token || !sameText(secret.token, token)) return { error: 'token does not match server\'s copy' };
  if (secret.labels?.['kubernetes.io/legacy-token-invalid-since']) return { error: 'the token is invalid since ' + secret.labels['kubernetes.io/legacy-token-invalid-since'] };
  const sa = lookup.serviceAccount(namespace, saName);
  if (!sa) return { error: `serviceaccounts "${saName}" not found` };
  if (sa.deletionTimestamp) return { error: `service account ${namespace}/${saName} has been deleted` };
  if (sa.uid !== saUid) return { error: `service account UID (${sa.uid}) does not match claim (${saUid})` };
  return {
    user: { name: serviceAccountUsername(namespace, saName), uid: saUid, groups: ['system:serviceaccounts', `system:serviceaccounts:${namespace}`, 'system:authenticated'] },
  };
}

/** the cluster's service account signing key: issues tokens and authenticates them */
export class ServiceAccountTokens {
  private readonly privateKey: KeyObject;
  private readonly publicKey: KeyObject;
  private readonly kid: string;

  constructor(
    private readonly lookup: TokenLookup,
    privateKey?: KeyObject,
  ) {
    this.privateKey = privateKey ?? generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
    this.publicKey = publicKeyOf(this.privateKey);
    this.kid = keyId(this.publicKey);
  }

  issue(subject: TokenSubject, opts: IssueOptions): { token: string; claims: Record<string, unknown> } {
    const claims = tokenClaims(subject, opts);
    return { token: signJwt(claims, this.privateKey, this.kid), claims };
  }

  /** a Secret-based token, as the tokens controller writes into a kubernetes.io/service-account-token Secret */
  issueLegacy(namespace: string, serviceAccount: ObjectRef, secretName: string): string {
    return signJwt(legacyTokenClaims(namespace, serviceAccount, secretName), this.privateKey, this.kid);
  }

  /** the user a bearer token is, or the reason it is none (undefined when it is no JWT of this cluster) */
  authenticate(token: string, now?: number): Validation | undefined {
    if (!looksLikeJwt(token)) return undefined;
    const claims = verifyJwt(token, this.publicKey);
    if (!claims) return undefined;
    if (claims.iss === LEGACY_ISSUER) return validateLegacyClaims(claims, token, this.lookup);
    return validateClaims(claims, this.lookup, { now });
  }
}
