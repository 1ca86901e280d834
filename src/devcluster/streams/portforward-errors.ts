// The error text the kubelet writes on a port-forward error channel/stream.

export function forwardingError(port: number, podName: string, err: unknown): string {
  const why = err instanceof Error ? err.message : String(err);
  return `error forwarding port ${port} to pod ${podName}, uid : ${why}`;
}
