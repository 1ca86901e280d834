import assert from 'node:assert/strict';
import { test } from 'node:test';
import { allocateCreateNodePorts, allocateUpdateNodePorts } from '../../../src/devcluster/api/node-ports.js';
import type { KubeObject } from '../../../src/devcluster/types.js';
import { thrownApiError } from '../../util/api-error.js';

const service = (spec: any): KubeObject => ({ apiVersion: 'v1', kind: 'Service', metadata: { name: 's', namespace: 'ns', uid: 'u' }, spec });

test('a dynamic node port comes from above the static band (30000-30085) while there is room', () => {
  for (let i = 0; i < 200; i++) {
    const svc = service({ type: 'NodePort', ports: [{ port: 80 }] });
    allocateCreateNodePorts(svc, new Set());
    assert.ok(svc.spec.ports[0].nodePort >= 30086 && svc.spec.ports[0].nodePort <= 32767);
  }
  const upperTaken = new Set(Array.from({ length: 32767 - 30086 + 1 }, (_, i) => 30086 + i));
  const svc = service({ type: 'NodePort', ports: [{ port: 80 }] });
  allocateCreateNodePorts(svc, upperTaken);
  assert.ok(svc.spec.ports[0].nodePort >= 30000 && svc.spec.ports[0].nodePort < 30086);
  const full = new Set(Array.from({ length: 2768 }, (_, i) => 30000 + i));
  thrownApiError(() => allocateCreateNodePorts(service({ type: 'NodePort', ports: [{ port: 80 }] }), full), { code: 500, reason: 'InternalError' });
});

test('a port requested for one port number is shared by the other ports of that number', () => {
  const svc = service({ type: 'NodePort', ports: [{ name: 'u', port: 53, protocol: 'UDP' }, { name: 't', port: 53, protocol: 'TCP', nodePort: 30053 }] });
  allocateCreateNodePorts(svc, new Set());
  assert.deepEqual(svc.spec.ports.map((p: any) => p.nodePort), [30053, 30053]);
});

test('an update keeps the ports the Service had, and a LoadBalancer without node ports allocates none', () => {
  const old = service({ type: 'NodePort', ports: [{ name: 'a', port: 80, nodePort: 31000 }] });
  const resent = service({ type: 'NodePort', ports: [{ name: 'a', port: 80 }] });
  allocateUpdateNodePorts(resent, old, new Set([31001]));
  assert.equal(resent.spec.ports[0].nodePort, 31000);
  const lb = service({ type: 'LoadBalancer', allocateLoadBalancerNodePorts: false, ports: [{ port: 80 }] });
  allocateCreateNodePorts(lb, new Set());
  assert.equal(lb.spec.ports[0].nodePort, undefined);
});
