/**
 * The cluster as a run sees it (runtime/run.ts and the faces that start runs): the calls a run
 * makes, narrow enough to fake in unit tests. client.ts implements it: typed calls whose failures
 * are already sentences (KubeError), transient failures retried on every call that may be repeated,
 * and a pod watch that resumes when the server ends it or fails for a moment.
 */
import type { IncomingMessage } from 'node:http';
import type { KubeConfig, V1ConfigMap, V1NetworkPolicy, V1Pod, V1PodTemplate } from '@kubernetes/client-node';
import type { PodLogQuery } from './pod-log.js';

export interface KubeCluster {
  kc: KubeConfig;
  namespace: string;
  server: string;
  createPod(pod: V1Pod): Promise<V1Pod>;
  createConfigMap(cm: V1ConfigMap): Promise<V1ConfigMap>;
  createNetworkPolicy(np: V1NetworkPolicy): Promise<V1NetworkPolicy>;
  /** Sets (adds or replaces) annotations on a NetworkPolicy (a warm plan's shared policy: its expiry). */
  annotateNetworkPolicy(name: string, annotations: Record<string, string>): Promise<void>;
  /** Deletes and ignores "not found": cleanup must be idempotent. */
  deleteQuietly(kind: 'pods' | 'configmaps' | 'networkpolicies', name: string): Promise<void>;
  /** The container's log as bytes; `stream` asks for one of its streams (KEP-3288). */
  readPodLog(name: string, container: string, q?: Omit<PodLogQuery, 'follow'>): Promise<Buffer>;
  /** A log stream (follow or not), opened with retries; the caller reads and ends it. */
  openPodLog(name: string, container: string, q?: PodLogQuery): Promise<IncomingMessage>;
  /**
   * Whether `pods/log` serves stdout and stderr apart (KEP-3288, `stream=`): asked once per cluster.
   * Servers before 1.32 ignore the parameter (both streams would come back merged), and 1.32+ servers
   * without the PodLogsQuerySplitStreams gate refuse it with 422; so: a 1.32+ server that validates
   * the parameter and then looks for the pod (404 for a pod that does not exist).
   */
  servesSplitLogs(): Promise<boolean>;
  readPodTemplate(name: string): Promise<V1PodTemplate>;
  /** Watches one pod by name; `onPod` returns true to stop. Resumes from the last resourceVersion. */
  watchPod(name: string, onPod: (pod: V1Pod, type: string) => boolean, signal?: AbortSignal): Promise<void>;
  /** `major.minor` of the server, e.g. `{ major: 1, minor: 32 }`. */
  serverVersion(): Promise<{ major: number; minor: number }>;
  /**
   * A SelfSubjectAccessReview in this namespace: true/false, or undefined when the server could not
   * answer (then the real call will tell).
   */
  canI(verb: string, resource: string, subresource?: string, group?: string): Promise<boolean | undefined>;
}
