// Service discovery without DNS: each podman pod gets its own /etc/hosts, bind-mounted into its containers
// and rewritten in place (same inode, so the bind mount sees it) when Services or pods change.
// A Service name resolves to the IP of one Running pod it selects (headless-style: the pod's own ports).
import { readFileSync, writeFileSync } from 'node:fs';
import type { KubeObject } from '../types.js';
import { matchesMap } from './label-selector.js';

export const CLUSTER_DOMAIN = 'cluster.local';

export function podHostname(pod: KubeObject): string {
  return String(pod.spec?.hostname ?? pod.metadata.name ?? 'pod').slice(0, 63);
}

/** the pod a Service leads to: Running, with an IP, not terminating, oldest first */
export function serviceTarget(svc: KubeObject, pods: KubeObject[]): KubeObject | undefined {
  const selector: Record<string, string> | undefined = svc.spec?.selector;
  if (!selector || Object.keys(selector).length === 0) return undefined;
  return pods
    .filter((p) => p.metadata.namespace === svc.metadata.namespace && matchesMap(selector, p.metadata.labels))
    .filter((p) => p.status?.phase === 'Running' && p.status?.podIP && !p.metadata.deletionTimestamp)
    .sort((a, b) => String(a.metadata.creationTimestamp ?? '').localeCompare(String(b.metadata.creationTimestamp ?? '')) || String(a.metadata.name).localeCompare(String(b.metadata.name)))[0];
}

/** the hosts file of `pod`: loopback, its own name, then every Service that leads to a pod */
export function hostsFileContent(pod: KubeObject, podIP: string | undefined, services: KubeObject[], pods: KubeObject[]): string {
  const ns = pod.metadata.namespace;
  const hostname = podHostname(pod);
  const lines = ['# Kubernetes-managed hosts file (berth dev-cluster).', '127.0.0.1\tlocalhost', '::1\tlocalhost ip6-localhost ip6-loopback'];
  const own = [hostname];
  if (pod.spec?.subdomain) own.unshift(`${hostname}.${pod.spec.subdomain}.${ns}.svc.${CLUSTER_DOMAIN}`);
  lines.push(`${podIP ?? '127.0.1.1'}\t${own.join(' ')}`);
  // as the kubelet writes them: after the pod's own entry, under the same comment
  const aliases: { ip?: string; hostnames?: string[] }[] = pod.spec?.hostAliases ?? [];
  if (aliases.length) lines.push('', '# Entries added by HostAliases.');
  for (const a of aliases) if (a.ip && a.hostnames?.length) lines.push(`${a.ip}\t${a.hostnames.join('\t')}`);
  for (const svc of services) {
    if (svc.spec?.type === 'ExternalName') continue;
    const target = serviceTarget(svc, pods);
    const name = svc.metadata.name;
    const sns = svc.metadata.namespace;
    if (target) {
      const names = [`${name}.${sns}.svc.${CLUSTER_DOMAIN}`, `${name}.${sns}.svc`, `${name}.${sns}`];
      if (sns === ns && name) names.push(name);
      lines.push(`${target.status.podIP}\t${names.join(' ')}`);
    }
    // pods that name this Service as their subdomain get `<hostname>.<svc>.<ns>.svc.cluster.local`
    for (const p of pods) {
      if (p.metadata.namespace !== sns || p.spec?.subdomain !== name || !p.status?.podIP || p.metadata.uid === pod.metadata.uid) continue;
      lines.push(`${p.status.podIP}\t${podHostname(p)}.${name}.${sns}.svc.${CLUSTER_DOMAIN}`);
    }
  }
  return lines.join('\n') + '\n';
}

/** What was last written to each hosts file, so lines written there by the pod's own processes are told apart. */
const written = new Map<string, string>();

/**
 * Writes only when the content changed, truncating in place so the inode (and every bind mount) stays.
 * A kubelet writes a pod's /etc/hosts once; what processes in the pod add to it later (e.g. `berth serve`
 * announcing a network alias started later) stays. This file is rewritten when Services change, so the
 * lines that were not in the last content written here are kept, after the new content.
 */
export function writeHostsFile(path: string, content: string): void {
  let old: string | undefined;
  try {
    old = readFileSync(path, 'utf8');
  } catch {
    old = undefined;
  }
  const next = content + addedLines(old, written.get(path));
  written.set(path, content);
  // flag 'w' is O_TRUNC on the existing file: same inode, unlike a write-and-rename
  if (old !== next) writeFileSync(path, next, { flag: 'w' });
}

/** The lines of `current` that the last write (`managed`) did not put there, each ending in a newline. */
export function addedLines(current: string | undefined, managed: string | undefined): string {
  if (current === undefined || managed === undefined) return '';
  const ours = new Set(managed.split('\n'));
  const added = current.split('\n').filter((line) => line !== '' && !ours.has(line));
  return added.map((line) => `${line}\n`).join('');
}

/** The pod is gone: its file's record goes too. */
export function forgetHostsFile(path: string): void {
  written.delete(path);
}
