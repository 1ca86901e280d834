// A protobuf Pod (what `kubectl debug --copy-to` sends) read as the JSON the same Pod would have: embedded structs
// (VolumeSource, ProbeHandler) flattened, quantities as strings, Go pointers keeping their zero values.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decodeProtobufObject } from '../../../src/devcluster/server/body-protobuf.js';

function varint(n: number): Buffer {
  const out: number[] = [];
  do {
    let b = n & 0x7f;
    n >>>= 7;
    if (n > 0) b |= 0x80;
    out.push(b);
  } while (n > 0);
  return Buffer.from(out);
}
const bytes = (num: number, value: Buffer | string) => {
  const b = Buffer.isBuffer(value) ? value : Buffer.from(value);
  return Buffer.concat([varint((num << 3) | 2), varint(b.length), b]);
};
const int = (num: number, value: number) => Buffer.concat([varint(num << 3), varint(value)]);
const msg = (...fields: Buffer[]) => Buffer.concat(fields);

test('a Pod with an emptyDir volume, a probe, limits and runAsUser 0', () => {
  const container = msg(
    bytes(1, 'main'),
    bytes(2, 'busybox'),
    bytes(8, bytes(1, msg(bytes(1, 'cpu'), bytes(2, bytes(1, '500m'))))), // resources.limits.cpu = Quantity "500m"
    bytes(11, bytes(1, bytes(1, bytes(1, 'true')))), // readinessProbe.(handler).exec.command
    bytes(5, ''), // workingDir "" (a non-pointer string Go always writes)
  );
  const volume = msg(bytes(1, 'scratch'), bytes(2, bytes(2, Buffer.alloc(0)))); // (volumeSource).emptyDir {}
  const spec = msg(bytes(1, volume), bytes(2, container), bytes(3, ''), bytes(14, int(2, 0)));
  const pod = msg(bytes(1, bytes(1, 'copy')), bytes(2, spec));
  const body = Buffer.concat([Buffer.from('k8s\0', 'latin1'), bytes(1, msg(bytes(1, 'v1'), bytes(2, 'Pod'))), bytes(2, pod)]);
  assert.deepEqual(decodeProtobufObject(body), {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'copy' },
    spec: {
      volumes: [{ name: 'scratch', emptyDir: {} }],
      containers: [{ name: 'main', image: 'busybox', resources: { limits: { cpu: '500m' } }, readinessProbe: { exec: { command: ['true'] } } }],
      securityContext: { runAsUser: 0 },
    },
  });
});
