/**
 * `User` given by name (`node`, `postgres:postgres`, `1000:staff`): dockerd looks the names up in the
 * container's /etc/passwd and /etc/group when it starts the process. A pod's runAsUser/runAsGroup are
 * numbers and the kubelet resolves only the image's own USER, so berth reads those two files from the
 * image (through the container's peek pod) before the first start and gives the pod the numbers. Pure.
 */

export class UserNotFound extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UserNotFound';
  }
}

const NUMERIC = /^\d+$/;
/** A user or group name as shadow-utils and busybox accept it. */
const NAME = /^[A-Za-z0-9_.][A-Za-z0-9_.-]*\$?$/;

/** Whether `user` names a user or group that must be looked up (a part that is not a number). */
export function isNamedUser(user: string | undefined): user is string {
  if (!user) return false;
  return user.split(':').some((part) => !NUMERIC.test(part));
}

/** Whether `user` is something dockerd could look up: `name`, `uid`, each optionally `:group` or `:gid`. */
export function isValidUser(user: string): boolean {
  const parts = user.split(':');
  return parts.length <= 2 && parts.every((p) => NUMERIC.test(p) || NAME.test(p));
}

/** `name:x:uid:gid:…` lines (a group file has `name:x:gid:members`). */
function entries(file: string): string[][] {
  return file
    .split('\n')
    .filter((line) => line.trim() !== '' && !line.startsWith('#'))
    .map((line) => line.split(':'));
}

/**
 * `uid:gid` for `user` from the image's passwd and group files, as dockerd resolves it: a name's gid is its
 * passwd entry's unless a group is given; a numeric uid that passwd lacks keeps gid 0 (dockerd's default).
 */
export function resolveUser(user: string, passwd: string, group: string): string {
  const [userPart, groupPart] = user.split(':');
  const users = entries(passwd);
  let uid: string;
  let gid = '0';
  if (NUMERIC.test(userPart)) {
    uid = userPart;
    const entry = users.find((e) => e[2] === userPart);
    if (entry?.[3] && NUMERIC.test(entry[3])) gid = entry[3];
  } else {
    const entry = users.find((e) => e[0] === userPart && NUMERIC.test(e[2] ?? ''));
    if (!entry) throw new UserNotFound(`unable to find user ${userPart}: no matching entries in passwd file`);
    uid = entry[2];
    if (entry[3] && NUMERIC.test(entry[3])) gid = entry[3];
  }
  if (groupPart !== undefined) {
    if (NUMERIC.test(groupPart)) gid = groupPart;
    else {
      const entry = entries(group).find((e) => e[0] === groupPart && NUMERIC.test(e[2] ?? ''));
      if (!entry) throw new UserNotFound(`unable to find group ${groupPart}: no matching entries in group file`);
      gid = entry[2];
    }
  }
  return `${uid}:${gid}`;
}
