// Bearer-token authentication against the users the dev cluster was started with.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { UserInfo } from '../types.js';

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
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorizationHeader ?? '');
    if (!match) return undefined;
    const presented = digestOf(match[1]!);
    let found: UserInfo | undefined;
    // check every user, not only until the first match, so timing does not reveal the position
    for (const k of this.known) {
      if (timingSafeEqual(k.digest, presented) && !found) found = k.user;
    }
    return found ? { name: found.name, groups: [...found.groups] } : undefined;
  }
}
