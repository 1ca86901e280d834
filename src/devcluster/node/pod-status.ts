// Pod status as the kubelet writes it, computed from what the node knows about each container.
// Pure: the pod worker feeds it container statuses and writes the result through the store.
import type { KubeObject } from '../types.js';
import { qosClass } from './quantity.js';

/** the JSON of one v1.ContainerStatus */
export interface ContainerStatus {
  name: string;
  image: string;
  imageID: string;
  containerID?: string;
  ready: boolean;
  started: boolean;
  restartCount: number;
  state: ContainerState;
  lastState: ContainerState;
}

export interface ContainerState {
  waiting?: { reason: string; message?: string };
  running?: { startedAt: string };
  terminated?: {
    exitCode: number;
    signal?: number;
    reason: string;
    message?: string;
    startedAt: string;
    finishedAt: string;
    containerID?: string;
  };
}

export interface PodStatusInput {
  pod: KubeObject;
  /** the status stored now: conditions keep their lastTransitionTime while unchanged */
  previous: any;
  hostIP: string;
  podIP?: string;
  startTime?: string;
  /** the podman pod (sandbox) exists and has its network */
  sandboxReady: boolean;
  initStatuses: ContainerStatus[];
  containerStatuses: ContainerStatus[];
  /** pod-level failure, e.g. DeadlineExceeded */
  failure?: { reason: string; message: string };
  now: string;
}

export function podPhase(restartPolicy: string, init: ContainerStatus[], containers: ContainerStatus[]): 'Pending' | 'Running' | 'Succeeded' | 'Failed' {
  for (const s of init) {
    const t = s.state.terminated;
    if (t && t.exitCode === 0) continue;
    if (t && restartPolicy === 'Never') return 'Failed';
    return 'Pending';
  }
  let running = 0;
  let waiting = 0;
  let stopped = 0;
  let succeeded = 0;
  for (const s of containers) {
    if (s.state.running) running++;
    else if (s.state.terminated) {
      stopped++;
      if (s.state.terminated.exitCode === 0) succeeded++;
    } else if (s.lastState.terminated) stopped++; // waiting to restart: counts as stopped, as the kubelet does
    else waiting++;
  }
  if (waiting > 0) return 'Pending';
  if (running > 0) return 'Running';
  if (stopped > 0) {
    if (restartPolicy === 'Always') return 'Running';
    if (stopped === succeeded) return 'Succeeded';
    if (restartPolicy === 'Never') return 'Failed';
    return 'Running';
  }
  return 'Pending';
}

export function composePodStatus(input: PodStatusInput): any {
  const { pod, previous } = input;
  const restartPolicy: string = pod.spec?.restartPolicy ?? 'Always';
  const phase = input.failure ? 'Failed' : podPhase(restartPolicy, input.initStatuses, input.containerStatuses);
  const terminal = phase === 'Succeeded' || phase === 'Failed';
  const prevConditions: any[] = previous?.conditions ?? [];
  const cond = (type: string, status: boolean, reason?: string, message?: string) => {
    const s = status ? 'True' : 'False';
    const old = prevConditions.find((c) => c.type === type);
    const c: any = { type, status: s, lastProbeTime: null, lastTransitionTime: old && old.status === s ? old.lastTransitionTime : input.now };
    if (reason) c.reason = reason;
    if (message) c.message = message;
    return c;
  };

  const incompleteInit = input.initStatuses.filter((s) => !(s.state.terminated && s.state.terminated.exitCode === 0)).map((s) => s.name);
  const unready = input.containerStatuses.filter((s) => !s.ready).map((s) => s.name);
  const conditions: any[] = [];
  conditions.push(cond('PodReadyToStartContainers', input.sandboxReady && !terminal));
  conditions.push(
    incompleteInit.length === 0
      ? cond('Initialized', true)
      : cond('Initialized', false, 'ContainersNotInitialized', `containers with incomplete status: [${incompleteInit.join(' ')}]`),
  );
  const readyCond = (type: string) => {
    if (terminal) return cond(type, false, 'PodCompleted');
    if (unready.length === 0) return cond(type, true);
    return cond(type, false, 'ContainersNotReady', `containers with unready status: [${unready.join(' ')}]`);
  };
  conditions.push(readyCond('Ready'));
  conditions.push(readyCond('ContainersReady'));
  const scheduled = prevConditions.find((c) => c.type === 'PodScheduled');
  conditions.push(scheduled ?? cond('PodScheduled', true));

  const status: any = {
    phase,
    conditions,
    hostIP: input.hostIP,
    hostIPs: [{ ip: input.hostIP }],
  };
  if (input.failure) {
    status.reason = input.failure.reason;
    status.message = input.failure.message;
  }
  if (input.podIP) {
    status.podIP = input.podIP;
    status.podIPs = [{ ip: input.podIP }];
  }
  if (input.startTime) status.startTime = input.startTime;
  if (input.initStatuses.length > 0) status.initContainerStatuses = input.initStatuses;
  status.containerStatuses = input.containerStatuses;
  status.qosClass = qosClass(pod.spec);
  return status;
}

/** the terminated state's reason as the kubelet names it */
export function terminatedReason(exitCode: number, oomKilled: boolean): string {
  if (oomKilled) return 'OOMKilled';
  return exitCode === 0 ? 'Completed' : 'Error';
}
