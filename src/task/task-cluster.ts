/**
 * The cluster as a task run sees it (run-task.ts; a plan's task, get and put steps are task runs too): the
 * calls it makes and nothing of how they are made, narrow enough to fake in unit tests
 * (test/unit/task/fake-task-cluster.ts). kube/client.ts's ClusterClient implements it; the CLI connects
 * (cli/task-connect.ts) and hands the connection in, so the task face never reads a kubeconfig.
 */
import type { IncomingMessage } from 'node:http';
import type { V1Pod, V1PodTemplate, V1Secret } from '@kubernetes/client-node';
import type { PodLogQuery } from '../kube/pod-log.js';
import type { FeedAttach } from '../runtime/file-feed.js';
import type { CacheUse } from './cache-claims.js';
import type { ExecClient } from './outputs.js';

/** The calls of a run's caches (cache-claims.ts), of its outputs' reads (outputs.ts), of its inputs' feed (runtime/file-feed.ts), and these: */
export interface TaskCluster extends CacheUse, ExecClient, FeedAttach {
  readonly namespace: string;
  createPod(pod: V1Pod): Promise<V1Pod>;
  /** 404 is success: cleanup may delete a pod twice. */
  deletePod(name: string): Promise<void>;
  /** The params Secret (never values in the pod spec). */
  createSecret(secret: V1Secret): Promise<V1Secret>;
  /** 404 is success. */
  deleteSecret(name: string): Promise<void>;
  /** Watches one pod by name; `onPod` returns true to stop. */
  watchPod(name: string, onPod: (pod: V1Pod, type: string) => boolean, signal?: AbortSignal): Promise<void>;
  /** A target's pod template named as an object in the namespace. */
  readPodTemplate(name: string): Promise<V1PodTemplate>;
  /** The container's log as bytes; `stream` asks for one of its streams (KEP-3288). */
  readPodLog(name: string, container: string, q?: Omit<PodLogQuery, 'follow'>): Promise<Buffer>;
  /** A log stream (follow or not); the caller reads and ends it. */
  openPodLog(name: string, container: string, q?: PodLogQuery): Promise<IncomingMessage>;
  /** Whether `pods/log` serves stdout and stderr apart (kube/cluster.ts says how it is asked). */
  servesSplitLogs(): Promise<boolean>;
  /** A SelfSubjectAccessReview in the namespace; rejects when the server could not answer. */
  reviewAccess(verb: string, resource: string, subresource?: string): Promise<boolean>;
}

/** What a task run is handed to reach its cluster. */
export interface TaskConnection {
  cluster: TaskCluster;
  /** The kubeconfig context it was reached through: the target's name when the run names no stored target (caches are kept per target). */
  context: string;
}

/**
 * Connects when a run has passed its local checks: a run that cannot start for a local reason says so
 * before any kubeconfig is looked for, and each step of a plan connects as it starts.
 */
export type ConnectTask = () => Promise<TaskConnection>;
