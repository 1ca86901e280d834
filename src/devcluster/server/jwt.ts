// Compact JSON Web Tokens signed with RS256 (RFC 7515/7519), as kube-apiserver's service account token
// generator writes them: a `kid` naming the signing key, the claims as JSON. Pure apart from node:crypto.
import { createHash, createPublicKey, sign, verify, type KeyObject } from 'node:crypto';

export interface JwtHeader {
  alg: string;
  kid?: string;
  typ?: string;
}

const b64url = (data: Buffer | string) => Buffer.from(data).toString('base64url');

/** the key id kube-apiserver derives: SHA-256 of the public key's DER (SubjectPublicKeyInfo), base64url */
export function keyId(publicKey: KeyObject): string {
  return createHash('sha256').update(publicKey.export({ type: 'spki', format: 'der' })).digest('base64url');
}

export function signJwt(claims: Record<string, unknown>, privateKey: KeyObject, kid: string): string {
  const header: JwtHeader = { alg: 'RS256', kid };
  const input = `${b64url(JSON.stringify(header))}.${b64url(JSON.stringify(claims))}`;
  return `${input}.${b64url(sign('sha256', Buffer.from(input), privateKey))}`;
}

/** true when the token has the three dot-separated parts of a compact JWS */
export function looksLikeJwt(token: string): boolean {
  return /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(token);
}

/**
 * The claims of a token whose RS256 signature verifies with `publicKey`; undefined for anything else
 * (another algorithm, another key, a malformed token). Claims are not checked here: see service-account-tokens.ts.
 */
export function verifyJwt(token: string, publicKey: KeyObject): Record<string, unknown> | undefined {
  if (!looksLikeJwt(token)) return undefined;
  const [h, c, s] = token.split('.') as [string, string, string];
  let header: JwtHeader;
  let claims: unknown;
  try {
    header = JSON.parse(Buffer.from(h, 'base64url').toString('utf8'));
    claims = JSON.parse(Buffer.from(c, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  // the algorithm is fixed by the key, never taken from the token ("alg: none" and HS256-with-public-key attacks)
  if (header?.alg !== 'RS256') return undefined;
  if (!verify('sha256', Buffer.from(`${h}.${c}`), publicKey, Buffer.from(s, 'base64url'))) return undefined;
  if (!claims || typeof claims !== 'object' || Array.isArray(claims)) return undefined;
  return claims as Record<string, unknown>;
}

export function publicKeyOf(privateKey: KeyObject): KeyObject {
  return createPublicKey(privateKey);
}
