// Events as the kubelet names them: `<object>.<hex of ns>`, so the store's name-ordered list is in the order
// they happened (kubectl describe sorts by a timestamp of whole seconds and keeps that order for ties).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { resourceByKind } from '../../../src/devcluster/api/resources.js';
import { MemoryStore } from '../../../src/devcluster/api/store.js';
import { EventRecorder } from '../../../src/devcluster/node/events.js';
import type { KubeObject } from '../../../src/devcluster/types.js';

test('events of one instant list in the order they were recorded, named <object>.<hex>', () => {
  const store = new MemoryStore();
  const events = new EventRecorder(store, 'node');
  const pod: KubeObject = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'ns', uid: 'u1' } };
  const reasons = ['Scheduled', 'Pulled', 'Created', 'Started', 'Killing', 'BackOff', 'Failed', 'Unhealthy'];
  for (const r of reasons) events.record(pod, 'Normal', r, `${r} happened`);
  const listed = store.list(resourceByKind('Event'), 'ns').items as Array<KubeObject & { reason: string }>;
  assert.deepEqual(listed.map((e) => e.reason), reasons);
  for (const e of listed) assert.match(e.metadata.name!, /^p\.[0-9a-f]{16}$/);
});
