// The size of a memory-backed emptyDir's tmpfs, as the kubelet's calculateEmptyDirMemorySize gives it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { emptyDirMemoryBytes, podMemoryLimit } from '../../../src/devcluster/node/memory-volumes.js';

const GI = 2 ** 30;
const MI = 2 ** 20;
const memory = (sizeLimit?: string) => ({ name: 'shm', emptyDir: { medium: 'Memory', ...(sizeLimit === undefined ? {} : { sizeLimit }) } });
const container = (limit?: string, extra: object = {}) => ({ name: 'c', image: 'i', ...extra, ...(limit ? { resources: { limits: { memory: limit } } } : {}) });

test('a memory emptyDir takes its sizeLimit when it is below what the pod may use', () => {
  assert.equal(emptyDirMemoryBytes(memory('256Mi'), { containers: [container()] }, 8 * GI), 256 * MI);
  assert.equal(emptyDirMemoryBytes(memory('268435456'), { containers: [container('1Gi')] }, 8 * GI), 256 * MI);
});

test('without a sizeLimit (or a zero one) it is the pod limit, or the node allocatable memory when the pod has none', () => {
  assert.equal(emptyDirMemoryBytes(memory(), { containers: [container()] }, 8 * GI), 8 * GI);
  assert.equal(emptyDirMemoryBytes(memory('0'), { containers: [container('512Mi')] }, 8 * GI), 512 * MI);
});

test('a sizeLimit above the pod limit or the node is lowered to them', () => {
  assert.equal(emptyDirMemoryBytes(memory('2Gi'), { containers: [container('512Mi')] }, 8 * GI), 512 * MI);
  assert.equal(emptyDirMemoryBytes(memory('64Gi'), { containers: [container()] }, 8 * GI), 8 * GI);
});

test('the pod limit exists only when every container declares one; init containers count by their largest, sidecars add', () => {
  assert.equal(podMemoryLimit({ containers: [container('1Gi'), container()] }), undefined);
  assert.equal(podMemoryLimit({ containers: [container('1Gi'), container('1Gi')] }), 2 * GI);
  assert.equal(podMemoryLimit({ containers: [container('1Gi')], initContainers: [container('3Gi')] }), 3 * GI);
  assert.equal(podMemoryLimit({ containers: [container('1Gi')], initContainers: [container('1Gi', { restartPolicy: 'Always' })] }), 2 * GI);
  assert.equal(podMemoryLimit({ containers: [container('1Gi')], initContainers: [container()] }), undefined);
});
