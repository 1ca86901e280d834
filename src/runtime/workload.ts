/**
 * A Workload is what every berth face asks the runtime to run: docker-run semantics, independent of
 * how it becomes Kubernetes objects (that is plan.ts).
 */

export type MountKind = 'file' | 'dir';

export interface WorkloadMount {
  /** Absolute host path whose contents are shipped into the pod (a pod cannot see the caller's disk). */
  source: string;
  /** Absolute path inside the container. */
  target: string;
  readOnly: boolean;
  /** Filled in by snapshotMounts when the caller does not know it yet. */
  kind?: MountKind;
}

/** `none` denies all traffic with a NetworkPolicy; `host` uses the node's network; others are the pod network. */
export type WorkloadNetwork = 'none' | 'host' | 'bridge' | (string & {});

export type PullPolicy = 'Always' | 'IfNotPresent' | 'Never';

export interface WorkloadResources {
  /** Kubernetes quantity, e.g. `512Mi`. */
  memory?: string;
  /** Kubernetes quantity, e.g. `1500m`. */
  cpus?: string;
}

export interface WorkloadUser {
  uid: number;
  gid?: number;
}

/** A pod template chosen by the user: the only thing allowed to loosen berth's secure defaults. */
export interface PodTemplateSource {
  /** Already-resolved template spec (from a PodTemplate object or a file). */
  template: {
    metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> };
    spec?: Record<string, unknown>;
  };
  /** Where it came from, for error messages. */
  origin: string;
}

export interface Workload {
  image: string;
  /** Replaces the image ENTRYPOINT (docker `--entrypoint`), i.e. the container's `command`. */
  command?: string[];
  /** Replaces the image CMD, i.e. the container's `args`. */
  args?: string[];
  env?: Array<{ name: string; value: string }>;
  workingDir?: string;
  user?: WorkloadUser;
  stdin?: boolean;
  tty?: boolean;
  mounts?: WorkloadMount[];
  network?: WorkloadNetwork;
  resources?: WorkloadResources;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  podTemplate?: PodTemplateSource;
  serviceAccount?: string;
  pullPolicy?: PullPolicy;
  /** How long the pod may take to get its container running (default 60). */
  startTimeoutSeconds?: number;
  /** Hard bound on the pod's life: activeDeadlineSeconds. */
  deadlineSeconds?: number;
  noNewPrivileges?: boolean;
  /** docker `--name`: used as the pod name prefix (the name itself must stay unique per run). */
  name?: string;
}
