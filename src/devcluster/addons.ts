// The cluster's add-ons, run as processes of this machine as kind runs them as pods: CoreDNS for Service names,
// kube-router's policy controller for NetworkPolicy (iptables and ipset: this kernel lacks NFQUEUE for the others),
// and local-path-provisioner for PersistentVolumeClaims.
import { join } from 'node:path';
import { LOCAL_PATH_NAMESPACE, LOCAL_PATH_PROVISIONER } from './bootstrap-objects.js';
import { Layout, NET } from './layout.js';
import { inNodeNetwork, type NodeSpec } from './nodes.js';

const addonsKubeconfig = (layout: Layout) => join(layout.config, 'addons.kubeconfig');

/** no cache: a Service made a moment ago must resolve now, and a name asked for too early must not stay unknown */
export function corefile(layout: Layout): string {
  return [
    '.:53 {',
    `  bind ${NET.nodeIp}`,
    '  errors',
    `  kubernetes ${NET.clusterDomain} in-addr.arpa ip6.arpa {`,
    `    kubeconfig ${addonsKubeconfig(layout)}`,
    '    pods insecure',
    '    fallthrough in-addr.arpa ip6.arpa',
    '  }',
    '}',
    '',
  ].join('\n');
}

export function corednsArgs(layout: Layout): string[] {
  return [layout.bin('coredns', 'coredns'), '-conf', join(layout.config, 'Corefile')];
}

/** one per node, in the node's network: it guards the pods of its node */
export function kubeRouterArgs(layout: Layout, node: NodeSpec): string[] {
  return [
    ...inNodeNetwork(node),
    layout.bin('kube-router', 'kube-router'),
    `--kubeconfig=${addonsKubeconfig(layout)}`,
    '--run-firewall=true',
    '--run-router=false',
    '--run-service-proxy=false',
    '--enable-cni=false',
    `--hostname-override=${node.name}`,
    `--service-cluster-ip-range=${NET.serviceCidr}`,
    // its health server would listen on every interface
    '--health-port=0',
    '--metrics-port=0',
  ];
}

export function kubeRouterCleanupArgs(layout: Layout): string[] {
  return [layout.bin('kube-router', 'kube-router'), '--cleanup-config'];
}

export function localPathArgs(layout: Layout, helperImage: string): string[] {
  return [
    layout.bin('local-path', 'local-path-provisioner'),
    'start',
    `--kubeconfig=${addonsKubeconfig(layout)}`,
    `--namespace=${LOCAL_PATH_NAMESPACE}`,
    `--provisioner-name=${LOCAL_PATH_PROVISIONER}`,
    '--service-account-name=local-path-provisioner',
    '--configmap-name=local-path-config',
    `--helper-image=${helperImage}`,
  ];
}

/** the provisioner's ConfigMap: one folder shared by the node (no node affinity, so claims bind at once) */
export function localPathConfigMap(layout: Layout, helperImage: string): Record<string, unknown> {
  const helperPod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'helper-pod' },
    spec: { containers: [{ name: 'helper-pod', image: helperImage, imagePullPolicy: 'IfNotPresent' }] },
  };
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'local-path-config', namespace: LOCAL_PATH_NAMESPACE },
    data: {
      'config.json': JSON.stringify({ sharedFileSystemPath: layout.volumesDir }),
      setup: '#!/bin/sh\nset -eu\nmkdir -m 0777 -p "$VOL_DIR"\n',
      teardown: '#!/bin/sh\nset -eu\nrm -rf "$VOL_DIR"\n',
      'helperPod.yaml': JSON.stringify(helperPod),
    },
  };
}
