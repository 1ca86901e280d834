/**
 * The cluster as berth serve's engine sees it: the calls it makes, and nothing of how they are made.
 * kube/client.ts (ClusterClient) implements it over the Kubernetes API (retries, errors as sentences); the
 * unit tests implement it in memory (test/unit/dockerapi/fake-cluster.ts). The object shapes are
 * Kubernetes' own, taken as types only: this package never calls client-node.
 */
import type { Duplex, Readable, Writable } from 'node:stream';
import type { V1NetworkPolicy, V1PersistentVolumeClaim, V1Pod, V1PodTemplate, V1Service } from '@kubernetes/client-node';
import type { PodLogQuery } from '../kube/pod-log.js';
import type { FeedAttach } from '../runtime/file-feed.js';

export type Pod = V1Pod;
export type Service = V1Service;
export type Claim = V1PersistentVolumeClaim;
export type NetworkPolicy = V1NetworkPolicy;
export type PodTemplate = V1PodTemplate;

/** A pods/log query (KEP-3288's `stream` included), as src/kube asks it. */
export type LogQuery = PodLogQuery;

/** A running exec or attach session: `done` settles when the server closes it. */
export interface Session {
  done: Promise<unknown>;
  close(): void;
}

export interface ExecIo {
  stdin?: Readable;
  stdout?: Writable;
  stderr?: Writable;
  tty?: boolean;
}

/** `attachFeed` (FeedAttach): files copied before a start, into their receiver (containers/file-feed.ts). */
export interface ServeCluster extends FeedAttach {
  readonly namespace: string;
  createPod(pod: Pod): Promise<Pod>;
  readPod(name: string): Promise<Pod>;
  listPods(labelSelector: string): Promise<Pod[]>;
  /** Lowers activeDeadlineSeconds: the kubelet stops the pod and the object stays (logs, exit state). */
  expirePod(name: string, seconds: number): Promise<void>;
  annotatePod(name: string, annotations: Record<string, string>): Promise<void>;
  /** 404 is success. */
  deletePod(name: string): Promise<void>;
  createService(svc: Service): Promise<Service>;
  deleteService(name: string): Promise<void>;
  listServices(labelSelector: string): Promise<Service[]>;
  createClaim(pvc: Claim): Promise<Claim>;
  deleteClaim(name: string): Promise<void>;
  listClaims(labelSelector: string): Promise<Claim[]>;
  createNetworkPolicy(np: NetworkPolicy): Promise<NetworkPolicy>;
  deleteNetworkPolicy(name: string): Promise<void>;
  listNetworkPolicies(labelSelector: string): Promise<NetworkPolicy[]>;
  readPodTemplate(name: string): Promise<PodTemplate>;
  /** Runs `command` in the pod; `done` gives the exit code from the status channel. */
  exec(pod: string, container: string, command: string[], io: ExecIo): Promise<{ session: Session; done: Promise<{ exitCode: number }> }>;
  /** Feeds stdin of the pod's container (output is read from its log). */
  attachStdin(pod: string, container: string, stdin: Readable, tty: boolean): Promise<Session>;
  openLog(pod: string, container: string, q: LogQuery): Promise<Readable>;
  /** One port-forward for one TCP connection. */
  forward(pod: string, port: number): Promise<Duplex>;
  /** A list (to `onSync`), then a watch resumed as a reflector does; returns a stop function. */
  watchPods(
    labelSelector: string,
    onPod: (type: string, pod: Pod) => void,
    onError: (err: Error) => void,
    onSync?: (pods: Pod[], listStartedAt: number) => void,
  ): () => void;
}
