// Pod and container securityContext → who the container runs as, and the kubelet's runAsNonRoot check.
import type { KubeObject } from '../types.js';
import { ConfigError } from './config-error.js';

export interface SecuritySettings {
  /** podman --user value, undefined = the image's user */
  user?: string;
  groupAdd: string[];
  readOnlyRootFilesystem: boolean;
  noNewPrivileges: boolean;
  privileged: boolean;
  capAdd: string[];
  capDrop: string[];
}

/** imageUser: the image's Config.User ('', 'root', '0', '1000:1000', 'nobody') */
export function securitySettings(pod: KubeObject, container: any, imageUser: string): SecuritySettings {
  const podSc = pod.spec?.securityContext ?? {};
  const sc = container.securityContext ?? {};
  const uid: number | undefined = sc.runAsUser ?? podSc.runAsUser;
  const gid: number | undefined = sc.runAsGroup ?? podSc.runAsGroup;
  const nonRoot: boolean = sc.runAsNonRoot ?? podSc.runAsNonRoot ?? false;
  const where = `(pod: "${pod.metadata.namespace}/${pod.metadata.name}", container: ${container.name})`;
  const imageUserName = imageUser.split(':')[0] ?? '';
  const imageUserIsRoot = ['', 'root', '0'].includes(imageUserName);
  if (nonRoot) {
    if (uid !== undefined) {
      if (uid === 0) throw new ConfigError(`container's runAsUser breaks non-root policy ${where}`);
    } else if (imageUserIsRoot) {
      throw new ConfigError(`container has runAsNonRoot and image will run as root ${where}`);
    } else if (!/^\d+$/.test(imageUserName)) {
      throw new ConfigError(`container has runAsNonRoot and image has non-numeric user (${imageUserName}), cannot verify user is non-root ${where}`);
    }
  }
  let user: string | undefined;
  if (uid !== undefined) user = gid !== undefined ? `${uid}:${gid}` : String(uid);
  else if (gid !== undefined) user = `${imageUserName || '0'}:${gid}`;
  const groupAdd: string[] = [];
  if (podSc.fsGroup !== undefined) groupAdd.push(String(podSc.fsGroup));
  for (const g of podSc.supplementalGroups ?? []) groupAdd.push(String(g));
  return {
    user,
    groupAdd,
    readOnlyRootFilesystem: sc.readOnlyRootFilesystem === true,
    noNewPrivileges: sc.allowPrivilegeEscalation === false,
    privileged: sc.privileged === true,
    // A privileged container has every capability: the kubelet applies no list to it.
    ...(sc.privileged === true ? { capAdd: [], capDrop: [] } : podmanCapabilities(sc.capabilities?.add ?? [], sc.capabilities?.drop ?? [], uid !== undefined ? uid !== 0 : !imageUserIsRoot)),
  };
}

/** containerd's default capabilities (those of dockerd), which a container gets unless its pod drops them. */
export const CRI_DEFAULT_CAPABILITIES = ['CHOWN', 'DAC_OVERRIDE', 'FSETID', 'FOWNER', 'MKNOD', 'NET_RAW', 'SETGID', 'SETUID', 'SETFCAP', 'SETPCAP', 'NET_BIND_SERVICE', 'SYS_CHROOT', 'KILL', 'AUDIT_WRITE'];

/**
 * The podman flags that give a container the capabilities containerd would: from its default set (not
 * podman's containers.conf one, which lacks NET_RAW, MKNOD and AUDIT_WRITE), `ALL` in add then in drop
 * first, then the single adds, then the single drops. For root, `--cap-drop ALL` plus the list, so podman's
 * own defaults never decide. A non-root process gets no effective capabilities from containerd (the list
 * only bounds what it may gain), but podman makes every `--cap-add` of a non-root user ambient, hence
 * effective: so for non-root the list is only drops from the default set, and capabilities outside podman's
 * own default (NET_RAW, MKNOD, AUDIT_WRITE, added ones) are not in its bounding set.
 */
function podmanCapabilities(add: string[], drop: string[], nonRoot: boolean): { capAdd: string[]; capDrop: string[] } {
  const name = (c: string): string => c.trim().toUpperCase().replace(/^CAP_/, '');
  const adds = add.map(name);
  const drops = drop.map(name);
  if (adds.includes('ALL') && !drops.includes('ALL')) return nonRoot ? { capAdd: [], capDrop: drops } : { capAdd: ['ALL'], capDrop: drops.filter((c) => c !== 'ALL') };
  const caps = new Set(drops.includes('ALL') ? [] : CRI_DEFAULT_CAPABILITIES);
  for (const c of adds) if (c !== 'ALL') caps.add(c);
  for (const c of drops) caps.delete(c);
  if (nonRoot) return { capAdd: [], capDrop: CRI_DEFAULT_CAPABILITIES.filter((c) => !caps.has(c)) };
  return { capAdd: [...caps], capDrop: ['ALL'] };
}
