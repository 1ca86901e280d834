/**
 * The last words of a helper container (a feed's receiver, an image server) that failed: its log's last lines, for
 * the error that names the failure.
 */

/** The one call it makes (kube/client.ts's ClusterClient makes it). */
export interface LogReader {
  readPodLog(name: string, container: string, q?: { tailLines?: number }): Promise<Buffer>;
}

/** Its last three lines as `LINE; LINE`, blank ones left out; '' when there are none or they cannot be read. */
export async function lastLogLines(cluster: LogReader, pod: string, container: string): Promise<string> {
  const log = await cluster.readPodLog(pod, container, { tailLines: 3 }).catch(() => Buffer.alloc(0));
  return log
    .toString('utf8')
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .join('; ');
}
