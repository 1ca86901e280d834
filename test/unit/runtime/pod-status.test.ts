import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Pod } from '@kubernetes/client-node';
import { viewContainer } from '../../../src/runtime/pod-status.js';

const unschedulable = (message: string): V1Pod => ({
  metadata: { name: 'p' },
  spec: { containers: [{ name: 'main', image: 'busybox' }] },
  status: { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message }] },
});

test('a pod waiting for its volume claims to bind is pending, not failed (a provisioner makes the volume a moment later)', () => {
  const view = viewContainer(unschedulable('0/1 nodes are available: pod has unbound immediate PersistentVolumeClaims. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.'), 'main');
  assert.deepEqual(view, { state: 'pending', progress: 'waiting for its volume claims to bind' });
});

test('a pod no node can take fails at once, naming the scheduler\'s reason', () => {
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
      initContainerStatuses: [{ name: 'berth-isolation', image: 'busybox', imageID: '', ready: false, restartCount: 0, state: { terminated: { exitCode: 1, message: 'berth: --network none: no policy\n' } } }],
      containerStatuses: [{ name: 'main', image: 'fn', imageID: '', ready: false, restartCount: 0, state: { waiting: { reason: 'PodInitializing' } } }],
    },
  };
  assert.deepEqual(viewContainer(pod, 'main'), { state: 'failed', exitCode: 125, message: 'pod p: its init container berth-isolation failed with exit code 1: berth: --network none: no policy' });
});

test('an init container whose image cannot be pulled fails the main container at once, naming the helper image setting', () => {
  const pod: V1Pod = {
    metadata: { name: 'p' },
    spec: { nodeName: 'n', initContainers: [{ name: 'berth-isolation', image: 'docker.io/library/busybox:1.36' }], containers: [{ name: 'main', image: 'fn' }] },
    status: {
      phase: 'Pending',
      initContainerStatuses: [{ name: 'berth-isolation', image: 'busybox', imageID: '', ready: false, restartCount: 0, state: { waiting: { reason: 'ErrImagePull', message: 'no route to host' } } }],
      containerStatuses: [{ name: 'main', image: 'fn', imageID: '', ready: false, restartCount: 0, state: { waiting: { reason: 'PodInitializing' } } }],
    },
  };
  const view = viewContainer(pod, 'main');
  assert.equal(view.state, 'failed');
  assert.match((view as { message: string }).message, /^init container berth-isolation: ErrImagePull for docker\.io\/library\/busybox:1\.36 \(no route to host\) \(.*BERTH_HELPER_IMAGE/);
});
