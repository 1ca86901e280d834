// Bearer-token authentication: the users the dev cluster was started with, and service account tokens.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { UserInfo } from '../types.js';
import type { ServiceAccountTokens } from './service-account-tokens.js';

/** The cluster administrator: in system:masters, so RBAC never stands in its way. */
export const ADMIN_USER: UserInfo = { name: 'admin', groups: ['system:masters'] };

const AUTHENTICATED_GROUP = 'system:authenticated';

interface Known {
  digest: Buffer;
  user: UserInfo;
}

// Tokens are compared as SHA-256 digests so that every comparison takes the same time whatever the length.
const digestOf = (token: string) => createHash('sha256').update(token, 'utf8').digest();

export class TokenAuthenticator {
  private readonly known: Known[];

  constructor(users: { name: string; token: string; groups: string[] }[]) {
    this.known = users.map((u) => ({
      digest: digestOf(u.token),
      user: { name: u.name, groups: [...new Set([...u.groups, AUTHENTICATED_GROUP])] },
    }));
  }

  authenticate(authorizationHeader: string | undefined): UserInfo | undefined {
    const token = bearerToken(authorizationHeader);
    if (token === undefined) return undefined;
    const presented = digestOf(token);
    let found: UserInfo | undefined;
    // check every user, not only until the first match, so timing does not reveal the position
    for (const k of this.known) {
      if (timingSafeEqual(k.digest, presented) && !found) found = k.user;
    }
    return found ? { name: found.name, groups: [...found.groups] } : undefined;
  }
}

/** the token of an `Authorization: Bearer TOKEN` header */
export function bearerToken(authorizationHeader: string | undefined): string | undefined {
  return /^Bearer\s+(\S+)\s*$/i.exec(authorizationHeader ?? '')?.[1];
}

/** service account tokens (JWTs this cluster signed), checked against the objects they name as they are now */
export class ServiceAccountTokenAuthenticator {
  constructor(
    private readonly tokens: ServiceAccountTokens,
    private readonly log: (line: string) => void = (line) => process.stderr.write(`${line}\n`),
  ) {}

  authenticate(authorizationHeader: string | undefined): UserInfo | undefined {
    const token = bearerToken(authorizationHeader);
    if (token === undefined) return undefined;
    const result = this.tokens.authenticate(token);
    if (!result) return undefined;
    if ('error' in result) {
      // the real server logs why and answers only 401 Unauthorized
      this.log(`devcluster: service account token refused: ${result.error}`);
      return undefined;
    }
    return result.user;
  }
}

/** the first authenticator that knows the token decides, as the real server's union authenticator */
export class UnionAuthenticator {
  constructor(private readonly parts: { authenticate(authorizationHeader: string | undefined): UserInfo | undefined }[]) {}

  authenticate(authorizationHeader: string | undefined): UserInfo | undefined {
    for (const p of this.parts) {
      const user = p.authenticate(authorizationHeader);
      if (user) return user;
    }
    return undefined;
  }
}
