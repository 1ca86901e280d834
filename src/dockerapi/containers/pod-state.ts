/**
 * A container's state read from its pod (podState): running, exited and why, or created. Moved out of
 * model.ts so that the records import nothing of the file feed.
 */
import type { Pod as V1Pod } from '../cluster.js';
import type { ContainerStatus } from '../model.js';
import { FEED_CONTAINER, feedFailure } from './file-feed.js';
import { failedInit, FATAL_WAITING, lostNode, stuckInit } from '../../runtime/pod-status.js';

/** Reads the main container's state from the pod. */
export function podState(pod: V1Pod): {
  status: ContainerStatus;
  exitCode?: number;
  error?: string;
  oomKilled?: boolean;
  startedAt?: string;
  finishedAt?: string;
} {
  const cs = pod.status?.containerStatuses?.find((s) => s.name === 'main');
  const st = cs?.state;
  const iso = (d: Date | string | undefined): string | undefined => (d === undefined ? undefined : new Date(d).toISOString());
  // as dockerd shows a container that ran when its machine went down: exited, 255
  const lost = lostNode(pod, 'main');
  if (lost) return { status: 'exited', exitCode: 255, error: lost, startedAt: iso(st?.running?.startedAt), finishedAt: new Date().toISOString() };
  if (st?.running) return { status: 'running', startedAt: iso(st.running.startedAt) };
  if (st?.terminated) {
    const t = st.terminated;
    const error = t.reason === 'StartError' || t.reason === 'ContainerCannotRun' ? (t.message ?? t.reason) : '';
    return {
      status: 'exited',
      exitCode: t.exitCode,
      error,
      oomKilled: t.reason === 'OOMKilled',
      startedAt: iso(t.startedAt),
      finishedAt: iso(t.finishedAt ?? new Date()),
    };
  }
  const waiting = st?.waiting;
  if (waiting?.reason && FATAL_WAITING.has(waiting.reason))
    return { status: 'exited', exitCode: 125, error: `${waiting.reason}: ${waiting.message ?? ''}`.trim() };
  // An init container that cannot start (its image cannot be pulled) holds the pod forever: as fatal.
  const stuck = stuckInit(pod);
  if (stuck) {
    const reason = `${stuck.reason}: ${stuck.message ?? ''}`.trim();
    return {
      status: 'exited',
      exitCode: 125,
      error: stuck.name === FEED_CONTAINER ? feedFailure(stuck.image, reason) : `init container ${stuck.name} (image ${stuck.image}): ${reason}`,
    };
  }
  const failed = failedInit(pod);
  if (failed && (pod.status?.phase === 'Failed' || pod.status?.phase === 'Succeeded')) {
    return {
      status: 'exited',
      exitCode: 125,
      error: `init container ${failed.name} failed (exit code ${failed.exitCode})${failed.message ? `: ${failed.message}` : ''}`,
      finishedAt: new Date().toISOString(),
    };
  }
  if (pod.status?.phase === 'Failed' || pod.status?.phase === 'Succeeded') {
    return {
      status: 'exited',
      exitCode: 137,
      error: pod.status.reason === 'DeadlineExceeded' ? '' : (pod.status.message ?? pod.status.reason ?? ''),
      finishedAt: new Date().toISOString(),
    };
  }
  return { status: 'created' };
}
