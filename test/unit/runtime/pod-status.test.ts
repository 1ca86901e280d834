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
