/**
 * The lines berth writes into a member's /etc/hosts so that it finds the other members of its networks by name
 * (hostAliases at pod creation, lines appended when a member starts or connects later), and the edit that takes
 * names out again when a member leaves a network.
 */

/**
 * `hosts` without `names` on the lines of `ip`; a line left with no name goes. Other lines (comments, other IPs,
 * the kubelet's own entries) stay byte for byte.
 */
export function withoutNames(hosts: string, ip: string, names: string[]): string {
  const gone = new Set(names);
  const kept: string[] = [];
  for (const line of hosts.split('\n')) {
    const [address, ...hostnames] = line.trim().split(/\s+/);
    if (line.trimStart().startsWith('#') || address !== ip || !hostnames.some((h) => gone.has(h))) {
      kept.push(line);
      continue;
    }
    const left = hostnames.filter((h) => !gone.has(h));
    if (left.length) kept.push(`${ip}\t${left.join(' ')}`);
  }
  return kept.join('\n');
}
