/**
 * Exec's `User`: a Kubernetes exec runs as the container's own user and cannot take another, so an exec
 * asking for a different user is refused rather than run silently as the wrong one.
 */

/** Whether an exec as `requested` runs as that user in a container created with `User: containerUser`. */
export function execUserIsContainers(requested: string, containerUser: string): boolean {
  if (requested === '' || requested === containerUser) return true;
  // A container nobody gave a user runs as the image's; root is what nearly every image runs as, and a
  // client naming root there (as some do for every exec) is taken at its word.
  if (containerUser === '') return ['root', '0', '0:0', 'root:root'].includes(requested);
  const [uid, gid] = requested.split(':');
  const [cuid, cgid] = containerUser.split(':');
  return uid === cuid && (gid === undefined || cgid === undefined || gid === cgid);
}

export function execUserRefusal(requested: string, containerUser: string): string {
  const own = containerUser === '' ? "the image's user" : `user ${containerUser}`;
  return (
    `exec as user "${requested}" is not possible: a Kubernetes exec runs as the container's own user (${own}) ` +
    'and cannot switch; run the container as that user instead (docker run --user, testcontainers withUser), or exec without a user'
  );
}
