// A task container stopped from outside (deleted pod, deadline, eviction) did not end on its own.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Pod } from '@kubernetes/client-node';
import { stoppedFromOutside } from '../../../src/task/task-end.js';

const pod = (meta: Partial<NonNullable<V1Pod['metadata']>>, status: Partial<NonNullable<V1Pod['status']>> = {}, finishedAt?: string): V1Pod => ({
  metadata: { name: 'task-1', ...meta },
  spec: { containers: [], activeDeadlineSeconds: 60 },
  status: {
    ...status,
    containerStatuses: [
      {
        name: 'task',
        image: '',
        imageID: '',
        ready: false,
        restartCount: 0,
        state: { terminated: { exitCode: 0, ...(finishedAt ? { finishedAt: new Date(finishedAt) } : {}) } },
      },
    ],
  },
});

test('a task that ended on its own, also before a later delete of its pod', () => {
  assert.equal(stoppedFromOutside(pod({}), 'task'), undefined);
  // deleted at 10:00:20 with 10 s of grace (deletionTimestamp 10:00:30); the task had ended at 10:00:05
  assert.equal(
    stoppedFromOutside(pod({ deletionTimestamp: new Date('2026-01-01T10:00:30Z'), deletionGracePeriodSeconds: 10 }, {}, '2026-01-01T10:00:05Z'), 'task'),
    undefined,
  );
});

test("a delete asked before (or in the second of) the task's end stopped it: deleted", () => {
  const at = { deletionTimestamp: new Date('2026-01-01T10:00:30Z'), deletionGracePeriodSeconds: 10 };
  assert.equal(stoppedFromOutside(pod(at, {}, '2026-01-01T10:00:21Z'), 'task')?.kind, 'deleted');
  assert.equal(stoppedFromOutside(pod(at, {}, '2026-01-01T10:00:20Z'), 'task')?.kind, 'deleted', "the same second may be the delete's doing");
  assert.match(stoppedFromOutside(pod(at), 'task')?.message ?? '', /pod task-1 was deleted while the task ran/);
});

test('deadline and eviction', () => {
  const deadline = stoppedFromOutside(pod({}, { phase: 'Failed', reason: 'DeadlineExceeded' }), 'task');
  assert.equal(deadline?.kind, 'deadline');
  assert.match(deadline?.message ?? '', /activeDeadlineSeconds 60: raise BERTH_TTL/);
  assert.deepEqual(stoppedFromOutside(pod({}, { phase: 'Failed', reason: 'Evicted', message: 'The node was low on resource: memory.' }), 'task'), {
    kind: 'evicted',
    message: 'pod task-1 was evicted and the task was stopped: The node was low on resource: memory.',
  });
});

test('a running task whose node stopped reporting: lost, naming the node; one that ended before keeps its end', () => {
  const notReady = {
    conditions: [
      { type: 'Ready', status: 'False' },
      { type: 'ContainersReady', status: 'True' },
    ],
    phase: 'Running',
  };
  const running: V1Pod = {
    metadata: { name: 'task-1' },
    spec: { nodeName: 'berth-worker', containers: [] },
    status: { ...notReady, containerStatuses: [{ name: 'task', image: '', imageID: '', ready: true, restartCount: 0, state: { running: {} } }] },
  };
  const lost = stoppedFromOutside(running, 'task');
  assert.equal(lost?.kind, 'lost');
  assert.match(lost?.message ?? '', /^node berth-worker stopped reporting to the API server .*pod task-1 is unknown/);
  assert.equal(stoppedFromOutside(pod({}, notReady), 'task'), undefined);
});

test('a running task whose node was deleted (its pod deleted by pod GC): lost, naming the node, never a success', () => {
  const gone: V1Pod = {
    metadata: { name: 'task-1', deletionTimestamp: new Date('2026-11-29T01:00:00Z'), deletionGracePeriodSeconds: 0 },
    spec: { nodeName: 'berth-worker', containers: [] },
    status: {
      phase: 'Running',
      conditions: [{ type: 'DisruptionTarget', status: 'True', reason: 'DeletionByPodGC', message: 'PodGC: node no longer exists' }],
      containerStatuses: [{ name: 'task', image: '', imageID: '', ready: true, restartCount: 0, state: { running: {} } }],
    },
  };
  const lost = stoppedFromOutside(gone, 'task');
  assert.equal(lost?.kind, 'lost');
  assert.match(lost?.message ?? '', /^node berth-worker was deleted from the cluster .*; the task was stopped$/);
});
