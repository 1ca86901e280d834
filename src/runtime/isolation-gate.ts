/**
 * `--network none` is a deny-all NetworkPolicy, and every network plugin enforces a policy a moment after the pod
 * has its address (kube-router, Calico and Cilium all work asynchronously). Without a gate the container would
 * have the network for its first seconds. This init container, last before the main one, holds the pod until a
 * connection to the API server's Service fails, so the container starts cut off. On a cluster that enforces no
 * NetworkPolicy the gate gives up and fails the pod, saying why, instead of running it with a network.
 */
import type { V1Container } from '@kubernetes/client-node';
import { lockedDownContainer } from './pod-rules.js';

export const ISOLATION_CONTAINER = 'berth-isolation';
/** How long the policy may take to hold before berth calls the cluster one that does not enforce policies. */
export const ISOLATION_WAIT_SECONDS = 60;
export const ISOLATION_FAILED_MESSAGE =
  `berth: --network none: the pod could still open connections ${ISOLATION_WAIT_SECONDS} s after its deny-all NetworkPolicy was created; ` +
  'the cluster enforces no NetworkPolicy (install a network plugin that does, such as Calico, Cilium or kube-router)';

/**
 * One probe: a plain HTTP request to the API server's HTTPS port. An answer (exit 0, or "server returned error")
 * means the connection was made; a refusal, an unreachable host or the timeout means it was not.
 */
const script = [
  'h=$KUBERNETES_SERVICE_HOST; case $h in *:*) h="[$h]";; esac',
  `end=$(( $(date +%s) + ${ISOLATION_WAIT_SECONDS} ))`,
  'while :; do',
  '  out=$(timeout 2 wget -q -O /dev/null "http://$h:$KUBERNETES_SERVICE_PORT/" 2>&1); rc=$?',
  '  case "$rc $out" in "0 "*|*"server returned error"*) ;; *) exit 0;; esac',
  `  [ "$(date +%s)" -lt "$end" ] || { echo '${ISOLATION_FAILED_MESSAGE}' >&2; exit 1; }`,
  '  sleep 0.2',
  'done',
].join('\n');

/** The gate runs as the pod's user, with no capability and no privilege escalation. */
export function isolationGate(image: string): V1Container {
  return {
    name: ISOLATION_CONTAINER,
    image,
    imagePullPolicy: 'IfNotPresent',
    command: ['sh', '-c', script],
    // the kubelet makes the end of the log the status message, which berth reports when the gate fails
    terminationMessagePolicy: 'FallbackToLogsOnError',
    ...lockedDownContainer(),
  };
}
