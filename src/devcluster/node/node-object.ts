// The Node object the kubelet registers for itself.
import { cpus, hostname, release, totalmem } from 'node:os';
import { readFileSync } from 'node:fs';
import type { KubeObject } from '../types.js';

export const KUBELET_VERSION = 'v1.32.0-berth';

export interface NodeFacts {
  nodeName: string;
  hostIP: string;
  podmanVersion: string;
}

export function nodeObject(f: NodeFacts): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name: f.nodeName,
      labels: {
        'kubernetes.io/hostname': f.nodeName,
        'kubernetes.io/os': 'linux',
        'kubernetes.io/arch': 'amd64',
        'beta.kubernetes.io/os': 'linux',
        'beta.kubernetes.io/arch': 'amd64',
        'node-role.kubernetes.io/control-plane': '',
      },
      annotations: { 'node.alpha.kubernetes.io/ttl': '0' },
    },
    spec: { podCIDR: '10.88.0.0/16', podCIDRs: ['10.88.0.0/16'] },
    status: nodeStatus(f),
  };
}

export function nodeStatus(f: NodeFacts): any {
  const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  const resources = {
    cpu: String(cpus().length),
    memory: `${Math.floor(totalmem() / 1024)}Ki`,
    pods: '110',
    'ephemeral-storage': '100Gi',
  };
  const cond = (type: string, status: string, reason: string, message: string) => ({ type, status, lastHeartbeatTime: now, lastTransitionTime: now, reason, message });
  return {
    capacity: resources,
    allocatable: resources,
    conditions: [
      cond('MemoryPressure', 'False', 'KubeletHasSufficientMemory', 'kubelet has sufficient memory available'),
      cond('DiskPressure', 'False', 'KubeletHasNoDiskPressure', 'kubelet has no disk pressure'),
      cond('PIDPressure', 'False', 'KubeletHasSufficientPID', 'kubelet has sufficient PID available'),
      cond('Ready', 'True', 'KubeletReady', 'kubelet is posting ready status'),
    ],
    addresses: [
      { type: 'InternalIP', address: f.hostIP },
      { type: 'Hostname', address: f.nodeName },
    ],
    daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
    nodeInfo: {
      machineID: readFirst('/etc/machine-id'),
      systemUUID: readFirst('/sys/class/dmi/id/product_uuid'),
      bootID: readFirst('/proc/sys/kernel/random/boot_id'),
      kernelVersion: release(),
      osImage: osImage(),
      containerRuntimeVersion: `podman://${f.podmanVersion}`,
      kubeletVersion: KUBELET_VERSION,
      kubeProxyVersion: KUBELET_VERSION,
      operatingSystem: 'linux',
      architecture: 'amd64',
    },
    images: [],
  };
}

function readFirst(path: string): string {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch {
    return '';
  }
}

function osImage(): string {
  const m = /^PRETTY_NAME="?([^"\n]*)"?/m.exec(readFirst('/etc/os-release'));
  return m?.[1] ?? `Linux (${hostname()})`;
}
