/**
 * Linux capabilities of berth serve's containers: Docker's default set unless the operator narrows it
 * (`--capabilities`), which is also what CapAdd may ask for; beyond it only `--allow-privileged` grants.
 * Every pod drops ALL and is given this list back, so the container runtime's own default (which differs
 * between containerd, CRI-O and podman) never decides. Pure.
 */

/** dockerd's default set (moby `oci/caps/defaults.go`), which images and tools such as sshd expect. */
export const DOCKER_DEFAULT_CAPABILITIES: readonly string[] = [
  'CHOWN',
  'DAC_OVERRIDE',
  'FSETID',
  'FOWNER',
  'MKNOD',
  'NET_RAW',
  'SETGID',
  'SETUID',
  'SETFCAP',
  'SETPCAP',
  'NET_BIND_SERVICE',
  'SYS_CHROOT',
  'KILL',
  'AUDIT_WRITE',
];

export const CAPABILITIES_FLAG = '--capabilities';
export const CAPABILITIES_ENV = 'BERTH_SERVE_CAPABILITIES';

export class CapabilityRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CapabilityRefused';
  }
}

/** `cap_net_admin`, `CAP_NET_ADMIN`, `net_admin` → `NET_ADMIN`. */
export function capabilityName(cap: string): string {
  return cap.trim().toUpperCase().replace(/^CAP_/, '');
}

/**
 * The operator's `--capabilities` (or $BERTH_SERVE_CAPABILITIES): a comma-separated subset of Docker's default
 * set, or `none` for none at all (an empty list is refused). Anything outside Docker's set is refused: the setting only narrows.
 */
export function parseAllowedCapabilities(value: string, source: string): string[] {
  const names = value
    .split(',')
    .map(capabilityName)
    .filter((c) => c !== '');
  if (names.length === 0) throw new CapabilityRefused(`${source} is empty: give a comma-separated list of capabilities, or none`);
  if (names.length === 1 && names[0] === 'NONE') return [];
  for (const cap of names) {
    if (!DOCKER_DEFAULT_CAPABILITIES.includes(cap)) {
      throw new CapabilityRefused(
        `${source} ${value}: ${cap} is not in Docker's default set (${DOCKER_DEFAULT_CAPABILITIES.join(', ')}); this setting only narrows that set (--allow-privileged lets containers add others)`,
      );
    }
  }
  // Docker's order, without repeats: the pod's list does not depend on how the operator spelled it.
  return DOCKER_DEFAULT_CAPABILITIES.filter((c) => names.includes(c));
}

export interface CapabilityPolicy {
  /** What every container gets and what CapAdd may ask for: Docker's default set, or the operator's narrower one. */
  allowed: readonly string[];
  /** `--allow-privileged`: any CapAdd is granted. */
  allowPrivileged: boolean;
}

/**
 * A container's capabilities from its CapAdd/CapDrop, as dockerd merges them (drops first, `ALL` empties):
 * adds within the allowed set are granted, others refused naming the capability and the setting that decides.
 */
export function containerCapabilities(add: string[], drop: string[], policy: CapabilityPolicy): string[] {
  const drops = new Set(drop.map(capabilityName));
  const out = new Set(drops.has('ALL') ? [] : policy.allowed.filter((c) => !drops.has(c)));
  for (const raw of add) {
    const cap = capabilityName(raw);
    if (policy.allowed.includes(cap) || policy.allowPrivileged) {
      if (cap === 'ALL') continue; // privileged pods: granted through Privileged, not a list
      out.add(cap);
      continue;
    }
    throw new CapabilityRefused(`CapAdd=${cap}: ${refusalReason(cap, policy.allowed)}`);
  }
  return [...out];
}

function refusalReason(cap: string, allowed: readonly string[]): string {
  const given = allowed.length ? `only ${allowed.join(', ')}` : 'no capabilities';
  if (DOCKER_DEFAULT_CAPABILITIES.includes(cap)) {
    return `berth serve gives containers ${given}: its operator narrowed Docker's default set with ${CAPABILITIES_FLAG} (or $${CAPABILITIES_ENV}), which leaves ${cap} out`;
  }
  return `berth serve gives containers ${given} (Docker's default set${allowed.length < DOCKER_DEFAULT_CAPABILITIES.length ? `, narrowed by ${CAPABILITIES_FLAG}` : ''}); ${cap} is beyond it and only a berth serve started with --allow-privileged grants it`;
}
