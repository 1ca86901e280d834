// The process `up` leaves running in front of kube-apiserver: the fault proxy, wired to the node so
// that the switches the proxy cannot act on itself (slow pod starts, the kubelet's log rotation) reach it.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { noFaults, type Faults } from './faults.js';
import { nodeReady } from '../api-probe.js';
import { kubeletArgs } from '../component-args.js';
import { writeKubeletConfig } from '../config-files.js';
import { startFaultProxy } from './fault-proxy.js';
import { Layout, NET } from '../layout.js';
import { nodeSpec } from '../nodes.js';
import type { KubeletOptions } from '../node-configs.js';
import { pidOf, startProcess, stopProcess, waitUntil } from '../processes.js';
import { setPodStartDelay } from './runc-delay.js';

export const kubeletOptionsFile = (layout: Layout) => join(layout.config, 'kubelet-options.json');

/**
 * Rewrites the first node's kubelet configuration and restarts it (the kubelet reads its log rotation only at start).
 * Workers keep the rotation they started with: the switch is for the one-node cluster the rotation tests run on.
 */
async function restartKubelet(layout: Layout, change: Partial<KubeletOptions>): Promise<void> {
  const current = JSON.parse(readFileSync(kubeletOptionsFile(layout), 'utf8')) as KubeletOptions;
  const next = { ...current, ...change };
  if (next.containerLogMaxBytes === current.containerLogMaxBytes && Math.max(3000, next.containerLogCheckMs) === Math.max(3000, current.containerLogCheckMs))
    return;
  const first = nodeSpec(0);
  writeKubeletConfig(layout, first, next);
  const containerd = pidOf(layout, 'containerd');
  if (containerd === undefined) throw new Error('containerd is not running');
  await stopProcess(layout, 'kubelet', 5_000);
  startProcess(layout, 'kubelet', kubeletArgs(layout, first, containerd));
  await waitUntil(layout, 'kubelet', `node ${first.name} Ready`, () => nodeReady(layout, first.name), 120_000, 500);
}

/** `initial`: the switches `up` was given (its --fault-* flags), on from the first request */
export async function runFaultProxy(layout: Layout, host: string, port: number, initial: Partial<Faults> = {}): Promise<void> {
  const read = (f: string) => readFileSync(join(layout.pki, f), 'utf8');
  const kubelet = JSON.parse(readFileSync(kubeletOptionsFile(layout), 'utf8')) as KubeletOptions;
  const faults: Faults = { ...noFaults(), containerLogMaxBytes: kubelet.containerLogMaxBytes, containerLogCheckMs: kubelet.containerLogCheckMs, ...initial };
  setPodStartDelay(faults.delayPodStartMs);
  let applying = Promise.resolve();
  const proxy = await startFaultProxy({
    listenHost: host,
    listenPort: port,
    tls: { cert: read('proxy.crt'), key: read('proxy.key') },
    upstream: { host: NET.nodeIp, port: NET.apiPort, ca: read('ca.crt') },
    adminTokens: [read('admin.token').trim()],
    faults,
    onChange: (f) => {
      setPodStartDelay(f.delayPodStartMs);
      applying = applying
        .then(() => restartKubelet(layout, { containerLogMaxBytes: f.containerLogMaxBytes, containerLogCheckMs: f.containerLogCheckMs }))
        .catch((err: Error) => {
          process.stderr.write(`fault-proxy: restarting the kubelet failed: ${err.message}\n`);
        });
    },
  });
  writeFileSync(join(layout.stateDir, 'proxy.port'), String(proxy.port));
  process.stderr.write(`fault-proxy: listening on ${host}:${proxy.port}, forwarding to ${NET.nodeIp}:${NET.apiPort}\n`);
  const stop = () => void proxy.close().finally(() => process.exit(0));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}
