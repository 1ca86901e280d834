/**
 * A Sandbox's cluster: what berth serve's engine drives a long-lived pod with from outside (create and
 * delete pods, Services, claims and NetworkPolicies, one watch over all pods of a berth instance,
 * exec, stdin-only attach, raw log streams, port-forward per TCP connection). The calls themselves
 * are berth's one cluster client (src/kube/client.ts), with its one guard, retry policy, resumable
 * watch and raw log opener; this is the name the Docker API face knows them by.
 */
export { ClusterClient as SandboxCluster, isOurs, type ExecOutcome, type LogQuery } from '../kube/client.js';
