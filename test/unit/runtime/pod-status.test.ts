import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Pod } from '@kubernetes/client-node';
import { deletedByCluster, viewContainer } from '../../../src/runtime/pod-status.js';

const unschedulable = (message: string): V1Pod => ({
  metadata: { name: 'p' },
  spec: { containers: [{ name: 'main', image: 'busybox' }] },
  status: { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message }] },
});

test('a pod waiting for its volume claims to bind is pending, not failed (a provisioner makes the volume a moment later)', () => {
  const view = viewContainer(
    unschedulable(
      '0/1 nodes are available: pod has unbound immediate PersistentVolumeClaims. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.',
    ),
    'main',
  );
  assert.deepEqual(view, { state: 'pending', progress: 'waiting for its volume claims to bind' });
});

test('a pod whose claim is bound to a volume the scheduler has not seen yet is pending, not failed', () => {
  // seen in CI: the scheduler's cache learns of a freshly provisioned PersistentVolume after the claim names it
  const view = viewContainer(
    unschedulable('0/1 nodes are available: persistentvolume "pvc-9aac161a-c593-46f8-ac29-3be0ea2453c1" not found. not found'),
    'main',
  );
  assert.deepEqual(view, { state: 'pending', progress: 'waiting for its volume claims to bind' });
});

test("a pod no node can take fails at once, naming the scheduler's reason", () => {
  const view = viewContainer(unschedulable('0/1 nodes are available: 1 Insufficient memory.'), 'main');
  assert.equal(view.state, 'failed');
  assert.match((view as { message: string }).message, /cannot be scheduled: 0\/1 nodes are available: 1 Insufficient memory/);
});

test('a pod whose init container failed reports that container and its message, not only that the pod ended', () => {
  const pod: V1Pod = {
    metadata: { name: 'p' },
    spec: { nodeName: 'n', initContainers: [{ name: 'berth-isolation', image: 'busybox' }], containers: [{ name: 'main', image: 'fn' }] },
    status: {
      phase: 'Failed',
      initContainerStatuses: [
        {
          name: 'berth-isolation',
          image: 'busybox',
          imageID: '',
          ready: false,
          restartCount: 0,
          state: { terminated: { exitCode: 1, message: 'berth: --network none: no policy\n' } },
        },
      ],
      containerStatuses: [{ name: 'main', image: 'fn', imageID: '', ready: false, restartCount: 0, state: { waiting: { reason: 'PodInitializing' } } }],
    },
  };
  assert.deepEqual(viewContainer(pod, 'main'), {
    state: 'failed',
    exitCode: 125,
    message: 'pod p: its init container berth-isolation failed with exit code 1: berth: --network none: no policy',
  });
});

test('an init container whose image cannot be pulled fails the main container at once, naming the helper image setting', () => {
  const pod: V1Pod = {
    metadata: { name: 'p' },
    spec: {
      nodeName: 'n',
      initContainers: [{ name: 'berth-isolation', image: 'docker.io/library/busybox:1.36' }],
      containers: [{ name: 'main', image: 'fn' }],
    },
    status: {
      phase: 'Pending',
      initContainerStatuses: [
        {
          name: 'berth-isolation',
          image: 'busybox',
          imageID: '',
          ready: false,
          restartCount: 0,
          state: { waiting: { reason: 'ErrImagePull', message: 'no route to host' } },
        },
      ],
      containerStatuses: [{ name: 'main', image: 'fn', imageID: '', ready: false, restartCount: 0, state: { waiting: { reason: 'PodInitializing' } } }],
    },
  };
  const view = viewContainer(pod, 'main');
  assert.equal(view.state, 'failed');
  assert.match(
    (view as { message: string }).message,
    /^init container berth-isolation: ErrImagePull for docker\.io\/library\/busybox:1\.36 \(no route to host\) \(.*BERTH_HELPER_IMAGE/,
  );
});

/** a running pod as the node lifecycle controller leaves it once its node stops reporting: not Ready, containers ready */
const onNode = (ready: string, containersReady: string, state: Record<string, unknown> = { running: { startedAt: new Date(0) } }, gates = false): V1Pod => ({
  metadata: { name: 'p' },
  spec: { nodeName: 'berth-worker', containers: [{ name: 'main', image: 'busybox' }], ...(gates ? { readinessGates: [{ conditionType: 'x' }] } : {}) },
  status: {
    phase: 'Running',
    conditions: [
      { type: 'Ready', status: ready, lastTransitionTime: new Date('2026-11-28T17:34:34Z') },
      { type: 'ContainersReady', status: containersReady },
    ],
    containerStatuses: [{ name: 'main', image: 'busybox', imageID: '', ready: true, restartCount: 0, state }],
  },
});

test('a running container whose node stopped reporting fails, naming the node and since when; a healthy one runs', () => {
  const view = viewContainer(onNode('False', 'True'), 'main');
  assert.equal(view.state, 'failed');
  assert.match(
    (view as { message: string }).message,
    /^node berth-worker stopped reporting to the API server since 2026-11-28T17:34:34\.000Z .*pod p is unknown/,
  );
  assert.deepEqual(viewContainer(onNode('True', 'True'), 'main'), { state: 'running' });
  assert.equal(viewContainer(onNode('False', 'False'), 'main').state, 'running', 'not ready for its own reasons: still running');
  assert.deepEqual(viewContainer(onNode('False', 'True', { running: {} }, true), 'main'), { state: 'running' }, 'a readiness gate can hold Ready alone');
  const ended = viewContainer(onNode('False', 'True', { terminated: { exitCode: 4 } }), 'main');
  assert.equal(ended.state, 'terminated', 'an exit code recorded before the node went keeps its word');
});

test('a pod the cluster deleted with its node (pod GC) or after the node stayed unreachable (taint manager) says so, naming the node', () => {
  const deleted = (reason: string, message: string): V1Pod => ({
    metadata: { name: 'krm-sleep-1' },
    spec: { nodeName: 'berth-worker', containers: [{ name: 'main', image: 'fn' }] },
    status: { phase: 'Running', conditions: [{ type: 'DisruptionTarget', status: 'True', reason, message }] },
  });
  assert.equal(
    deletedByCluster(deleted('DeletionByPodGC', 'PodGC: node no longer exists')),
    'node berth-worker was deleted from the cluster (PodGC: node no longer exists): pod krm-sleep-1 was deleted with it, and the state and exit code of its container are lost',
  );
  assert.match(
    deletedByCluster(deleted('DeletionByTaintManager', 'Taint manager: deleting due to NoExecute taint')) ?? '',
    /^node berth-worker stayed unreachable/,
  );
  assert.equal(deletedByCluster(deleted('PreemptionByScheduler', 'preempted')), 'the cluster deleted pod krm-sleep-1 (PreemptionByScheduler: preempted)');
  assert.equal(deletedByCluster({ metadata: { name: 'p' }, status: { conditions: [{ type: 'DisruptionTarget', status: 'False' }] } }), undefined);
  assert.equal(deletedByCluster({ metadata: { name: 'p' } }), undefined, 'a delete by a user (kubectl delete) writes no condition');
});
