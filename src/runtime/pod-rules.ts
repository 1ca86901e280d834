/**
 * The rules every pod berth creates obeys (docs: "Rules that hold everywhere"), written once for every
 * planner: the function workload's (plan.ts), berth serve's (sandbox-plan.ts) and berth task's. A planner
 * that legitimately differs (serve's capabilities, a task's privileged step) passes the difference; a pod
 * template chosen by the user is the only thing that loosens the rules.
 */
import type { V1PodSecurityContext, V1PodSpec, V1SecurityContext } from '@kubernetes/client-node';

export const LABEL_MANAGED_BY = 'app.kubernetes.io/managed-by';
export const LABEL_OWNER = 'berth.dev/owner';
/** What part of a face an object is (a task's pod, berth serve's image pod). */
export const LABEL_COMPONENT = 'app.kubernetes.io/component';
export const ANNOTATION_EXPIRES_AT = 'berth.dev/expires-at';

/** Between SIGTERM and SIGKILL when the kubelet ends a pod: the 10 s of `docker stop`. */
const GRACE_PERIOD_SECONDS = 10;

/** The numeric user a pod or container runs as (a pod cannot read names from the image's /etc/passwd). */
export interface RunAs {
  uid: number;
  gid?: number;
}

/**
 * The labels every object berth creates carries: berth made it (berth gc selects by it) and which berth
 * instance owns it (recovery and cleanup select by it). A planner adds its own (run, component) after them.
 */
export function ownershipLabels(owner: string): Record<string, string> {
  return { [LABEL_MANAGED_BY]: 'berth', [LABEL_OWNER]: owner };
}

export interface PodLockdown {
  /** activeDeadlineSeconds: the kubelet ends the pod then, whatever became of berth. */
  deadlineSeconds: number;
  /** The run's user; undefined: the image's. */
  user?: RunAs;
  /** HostConfig.GroupAdd (berth serve). */
  supplementalGroups?: number[];
  /** A pod template's spec laid under the pod: its token, grace period and security context win. */
  template?: Partial<V1PodSpec>;
  /** Between the kubelet's SIGTERM and SIGKILL; GRACE_PERIOD_SECONDS unless the face gives the grace itself. */
  graceSeconds?: number;
}

export type LockedDownPodFields = Required<
  Pick<V1PodSpec, 'restartPolicy' | 'automountServiceAccountToken' | 'activeDeadlineSeconds' | 'terminationGracePeriodSeconds' | 'securityContext'>
>;

/** The fields of a pod spec that lock the pod down, to spread into the spec a planner makes. */
export function lockedDownPod(o: PodLockdown): LockedDownPodFields {
  const template = o.template ?? {};
  const securityContext: V1PodSecurityContext = {
    seccompProfile: { type: 'RuntimeDefault' },
    ...runAs(o.user),
    // The kubelet then refuses a container that would run as root after all (a template's user), and the
    // restricted Pod Security level asks for it.
    ...(o.user && o.user.uid !== 0 ? { runAsNonRoot: true } : {}),
    ...(o.supplementalGroups?.length ? { supplementalGroups: o.supplementalGroups } : {}),
    ...(template.securityContext ?? {}),
  };
  return {
    // The exit code is the container's terminated state: a restart would replace it.
    restartPolicy: 'Never',
    automountServiceAccountToken: template.automountServiceAccountToken ?? false,
    activeDeadlineSeconds: o.deadlineSeconds,
    terminationGracePeriodSeconds: template.terminationGracePeriodSeconds ?? o.graceSeconds ?? GRACE_PERIOD_SECONDS,
    securityContext,
  };
}

export interface ContainerExceptions {
  /** Given back after ALL is dropped (berth serve gives Docker's default set, as images expect dockerd's). */
  addCapabilities?: readonly string[];
  /** Privileged instead of the lockdown: only where the operator allowed it. */
  privileged?: boolean;
  /** HostConfig.ReadonlyRootfs. */
  readOnlyRootFilesystem?: boolean;
  /** The container's own user, where the pod's may be changed by a template (the files berth copies belong to the run's user). */
  user?: RunAs;
  /** A pod template's container security context: the user's deliberate choice, which may loosen. */
  template?: V1SecurityContext;
}

/** The locked-down part of a container, to spread into the container a planner makes. */
export function lockedDownContainer(e: ContainerExceptions = {}): { securityContext: V1SecurityContext } {
  const add = e.addCapabilities?.length ? { add: [...e.addCapabilities] } : {};
  return {
    securityContext: {
      // Kubernetes refuses privileged together with allowPrivilegeEscalation: false.
      ...(e.privileged ? { privileged: true } : { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'], ...add } }),
      ...(e.readOnlyRootFilesystem ? { readOnlyRootFilesystem: true } : {}),
      ...runAs(e.user),
      ...(e.template ?? {}),
    },
  };
}

function runAs(user: RunAs | undefined): { runAsUser?: number; runAsGroup?: number } {
  return { ...(user ? { runAsUser: user.uid } : {}), ...(user?.gid !== undefined ? { runAsGroup: user.gid } : {}) };
}
