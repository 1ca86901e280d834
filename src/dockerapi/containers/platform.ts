/**
 * `docker run --platform os/arch[/variant]` (create's `platform` query): dockerd runs the image's variant for
 * that platform; a pod runs what its node's container runtime pulls for the node's own platform, so berth places
 * the pod on a node of that platform (nodeSelector `kubernetes.io/os`, `kubernetes.io/arch`, the labels every
 * kubelet sets), rather than run it on any node. No such node: the pod cannot be scheduled and `start` says so.
 */
import { badRequest } from '../http/http.js';

export interface Platform {
  os: string;
  /** GOARCH, as kubernetes.io/arch spells it; absent when only an OS was named */
  arch?: string;
}

/** containerd's normalizations of the names people type (platforms.Normalize), as GOARCH */
const ARCH_ALIASES: Record<string, string> = { x86_64: 'amd64', 'x86-64': 'amd64', aarch64: 'arm64', armhf: 'arm', armel: 'arm', i386: '386' };
const OS_NAMES = new Set(['linux', 'windows']);
const NAME = /^[a-z0-9_-]+$/;

/** The platform a create names; undefined for none; a 400 in dockerd's words for one it cannot read. */
export function parsePlatform(value: string | null | undefined): Platform | undefined {
  if (!value) return undefined;
  const parts = value.toLowerCase().split('/');
  const invalid = (why: string): Error => badRequest(`"${value}": ${why}: invalid argument (give os/arch, such as linux/arm64)`);
  if (parts.length > 3 || parts.some((p) => !NAME.test(p))) throw invalid('unknown operating system or architecture');
  // one part is an OS when it names one, else an architecture (of linux), as containerd reads it
  const [first, second] = parts;
  const os = OS_NAMES.has(first) ? first : parts.length === 1 ? 'linux' : first;
  if (!OS_NAMES.has(os)) throw invalid(`unknown operating system "${os}"`);
  const rawArch = OS_NAMES.has(first) ? second : first;
  return rawArch === undefined ? { os } : { os, arch: ARCH_ALIASES[rawArch] ?? rawArch };
}

/** The pod's node selector for a platform. */
export function platformSelector(p: Platform): Record<string, string> {
  return { 'kubernetes.io/os': p.os, ...(p.arch ? { 'kubernetes.io/arch': p.arch } : {}) };
}
