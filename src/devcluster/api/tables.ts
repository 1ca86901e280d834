// Server-side printing: the meta.k8s.io/v1 Table kubectl asks for, with the columns and cell values of
// kube-apiserver's printers (pkg/printers/internalversion). Cells are computed as with "-o wide": the
// server always fills the priority-1 columns and kubectl hides them.
import type { KubeObject, ResourceType } from '../types.js';

export interface TableColumnDefinition {
  name: string;
  type: string;
  format: string;
  description: string;
  priority: number;
}

interface Column {
  name: string;
  type?: string;
  format?: string;
  description?: string;
  priority?: number;
}

type Cell = string | number | boolean;
interface Printer {
  columns: Column[];
  cells(obj: any, now: number): Cell[];
  conditions?(obj: any): unknown[] | undefined;
}

const NAME_DOC =
  'Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names';
const CREATED_DOC =
  'CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata';

const nameColumn: Column = { name: 'Name', format: 'name', description: NAME_DOC };
const ageColumn: Column = { name: 'Age', description: CREATED_DOC };

/** apimachinery duration.HumanDuration: the AGE column's "5s", "3m2s", "2d" ... */
export function humanDuration(ms: number): string {
  const seconds = Math.trunc(ms / 1000);
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.trunc(seconds / 60);
  if (minutes < 10) {
    const s = seconds % 60;
    return s === 0 ? `${minutes}m` : `${minutes}m${s}s`;
  }
  if (minutes < 180) return `${minutes}m`;
  const hours = Math.trunc(seconds / 3600);
  if (hours < 8) {
    const m = minutes % 60;
    return m === 0 ? `${hours}h` : `${hours}h${m}m`;
  }
  if (hours < 48) return `${hours}h`;
  if (hours < 24 * 8) {
    const h = hours % 24;
    return h === 0 ? `${Math.trunc(hours / 24)}d` : `${Math.trunc(hours / 24)}d${h}h`;
  }
  if (hours < 24 * 365 * 2) return `${Math.trunc(hours / 24)}d`;
  if (hours < 24 * 365 * 8) {
    const dy = Math.trunc(hours / 24) % 365;
    const y = Math.trunc(hours / 24 / 365);
    return dy === 0 ? `${y}y` : `${y}y${dy}d`;
  }
  return `${Math.trunc(hours / 24 / 365)}y`;
}

function since(timestamp: string | undefined, now: number): string {
  if (!timestamp) return '<unknown>';
  const t = Date.parse(timestamp);
  return Number.isNaN(t) ? '<unknown>' : humanDuration(now - t);
}

const age = (obj: any, now: number) => since(obj?.metadata?.creationTimestamp, now);

/** labels.FormatLabels: sorted `k=v` pairs, `<none>` when empty */
function formatLabels(labels: Record<string, string> | undefined): string {
  const keys = Object.keys(labels ?? {}).sort();
  return keys.length === 0 ? '<none>' : keys.map((k) => `${k}=${labels![k]}`).join(',');
}

/** metav1.FormatLabelSelector */
function formatLabelSelector(selector: any): string {
  if (!selector) return '<none>';
  const parts: string[] = [];
  for (const k of Object.keys(selector.matchLabels ?? {})) parts.push(`${k}=${selector.matchLabels[k]}`);
  for (const e of selector.matchExpressions ?? []) {
    const values = [...(e.values ?? [])].sort().join(',');
    if (e.operator === 'In') parts.push(`${e.key} in (${values})`);
    else if (e.operator === 'NotIn') parts.push(`${e.key} notin (${values})`);
    else if (e.operator === 'Exists') parts.push(e.key);
    else if (e.operator === 'DoesNotExist') parts.push(`!${e.key}`);
  }
  parts.sort((a, b) => keyOf(a).localeCompare(keyOf(b)));
  const text = parts.join(',');
  return text === '' ? '<none>' : text;
}

const keyOf = (requirement: string) => requirement.replace(/^!/, '').split(/[=\s]/)[0]!;

// ---- pods ----

const isRestartableInit = (c: any) => c?.restartPolicy === 'Always';
const hasCondition = (pod: any, type: string) => (pod.status?.conditions ?? []).some((c: any) => c.type === type && c.status === 'True');

function laterOf(current: string | undefined, candidate: string | undefined): string | undefined {
  if (!candidate) return current;
  if (!current) return candidate;
  return Date.parse(candidate) > Date.parse(current) ? candidate : current;
}

/** printPod: READY, STATUS, RESTARTS as kubectl shows them */
function podSummary(pod: any, now: number): { ready: string; reason: string; restarts: string } {
  const spec = pod.spec ?? {};
  const status = pod.status ?? {};
  let restarts = 0;
  let restartableInitRestarts = 0;
  let totalContainers = (spec.containers ?? []).length;
  let readyContainers = 0;
  let lastRestart: string | undefined;
  let lastRestartableInitRestart: string | undefined;

  let reason: string = status.reason || status.phase || '';
  for (const c of status.conditions ?? []) {
    if (c.type === 'PodScheduled' && c.reason === 'SchedulingGated') reason = 'SchedulingGated';
  }

  const initContainers = new Map<string, any>();
  for (const c of spec.initContainers ?? []) {
    initContainers.set(c.name, c);
    if (isRestartableInit(c)) totalContainers++;
  }

  let initializing = false;
  const initStatuses: any[] = status.initContainerStatuses ?? [];
  for (let i = 0; i < initStatuses.length; i++) {
    const cs = initStatuses[i];
    restarts += cs.restartCount ?? 0;
    lastRestart = laterOf(lastRestart, cs.lastState?.terminated?.finishedAt);
    const restartable = isRestartableInit(initContainers.get(cs.name));
    if (restartable) {
      restartableInitRestarts += cs.restartCount ?? 0;
      lastRestartableInitRestart = laterOf(lastRestartableInitRestart, cs.lastState?.terminated?.finishedAt);
    }
    const terminated = cs.state?.terminated;
    const waiting = cs.state?.waiting;
    if (terminated && (terminated.exitCode ?? 0) === 0) continue;
    if (restartable && cs.started === true) {
      if (cs.ready) readyContainers++;
      continue;
    }
    if (terminated) {
      if (!terminated.reason) reason = terminated.signal ? `Init:Signal:${terminated.signal}` : `Init:ExitCode:${terminated.exitCode ?? 0}`;
      else reason = `Init:${terminated.reason}`;
    } else if (waiting?.reason && waiting.reason !== 'PodInitializing') {
      reason = `Init:${waiting.reason}`;
    } else {
      reason = `Init:${i}/${(spec.initContainers ?? []).length}`;
    }
    initializing = true;
    break;
  }

  if (!initializing || hasCondition(pod, 'Initialized')) {
    restarts = restartableInitRestarts;
    lastRestart = lastRestartableInitRestart;
    let hasRunning = false;
    const statuses: any[] = status.containerStatuses ?? [];
    for (let i = statuses.length - 1; i >= 0; i--) {
      const cs = statuses[i];
      restarts += cs.restartCount ?? 0;
      lastRestart = laterOf(lastRestart, cs.lastState?.terminated?.finishedAt);
      const waiting = cs.state?.waiting;
      const terminated = cs.state?.terminated;
      if (waiting?.reason) reason = waiting.reason;
      else if (terminated?.reason) reason = terminated.reason;
      else if (terminated) reason = terminated.signal ? `Signal:${terminated.signal}` : `ExitCode:${terminated.exitCode ?? 0}`;
      else if (cs.ready && cs.state?.running) {
        hasRunning = true;
        readyContainers++;
      }
    }
    if (reason === 'Completed' && hasRunning) reason = hasCondition(pod, 'Ready') ? 'Running' : 'NotReady';
  }

  const terminalPhase = status.phase === 'Succeeded' || status.phase === 'Failed';
  if (pod.metadata?.deletionTimestamp && status.reason === 'NodeLost') reason = 'Unknown';
  else if (pod.metadata?.deletionTimestamp && !terminalPhase) reason = 'Terminating';

  const restartsText = restarts !== 0 && lastRestart ? `${restarts} (${since(lastRestart, now)} ago)` : String(restarts);
  return { ready: `${readyContainers}/${totalContainers}`, reason, restarts: restartsText };
}

function readinessGates(pod: any): string {
  const gates: any[] = pod.spec?.readinessGates ?? [];
  if (gates.length === 0) return '<none>';
  let trueConditions = 0;
  for (const gate of gates) {
    const condition = (pod.status?.conditions ?? []).find((c: any) => c.type === gate.conditionType);
    if (condition?.status === 'True') trueConditions++;
  }
  return `${trueConditions}/${gates.length}`;
}

const podPrinter: Printer = {
  columns: [
    nameColumn,
    { name: 'Ready', description: 'The aggregate readiness state of this pod for accepting traffic.' },
    { name: 'Status', description: 'The aggregate status of the containers in this pod.' },
    { name: 'Restarts', description: 'The number of times the containers in this pod have been restarted and when the last container in this pod has restarted.' },
    ageColumn,
    { name: 'IP', priority: 1, description: 'podIP address allocated to the pod. Routable at least within the cluster. Empty if not yet allocated.' },
    { name: 'Node', priority: 1, description: 'NodeName indicates in which node this pod is scheduled.' },
    { name: 'Nominated Node', priority: 1, description: 'nominatedNodeName is set only when this pod preempts other pods on the node.' },
    { name: 'Readiness Gates', priority: 1, description: 'If specified, all readiness gates will be evaluated for pod readiness.' },
  ],
  cells(pod, now) {
    const s = podSummary(pod, now);
    const podIP = pod.status?.podIPs?.[0]?.ip || pod.status?.podIP || '<none>';
    return [
      pod.metadata?.name ?? '',
      s.ready,
      s.reason,
      s.restarts,
      age(pod, now),
      podIP,
      pod.spec?.nodeName || '<none>',
      pod.status?.nominatedNodeName || '<none>',
      readinessGates(pod),
    ];
  },
  conditions(pod) {
    if (pod.status?.phase === 'Succeeded') return [{ type: 'Completed', status: 'True', reason: 'Succeeded', message: 'The pod has completed successfully.' }];
    if (pod.status?.phase === 'Failed') return [{ type: 'Completed', status: 'True', reason: 'Failed', message: 'The pod failed.' }];
    return undefined;
  },
};

// ---- the other printers ----

function serviceExternalIP(svc: any): string {
  const externalIPs: string[] = svc.spec?.externalIPs ?? [];
  switch (svc.spec?.type) {
    case 'ClusterIP':
    case 'NodePort':
    case undefined:
      return externalIPs.length > 0 ? externalIPs.join(',') : '<none>';
    case 'LoadBalancer': {
      const ingress = [...new Set((svc.status?.loadBalancer?.ingress ?? []).map((i: any) => i.ip || i.hostname).filter(Boolean))].sort() as string[];
      let lb = ingress.join(',');
      if (externalIPs.length > 0) return [...(lb ? lb.split(',') : []), ...externalIPs].join(',');
      if (lb.length > 16) lb = `${lb.slice(0, 13)}...`;
      return lb || '<pending>';
    }
    case 'ExternalName':
      return svc.spec?.externalName ?? '';
    default:
      return '<unknown>';
  }
}

function servicePorts(svc: any): string {
  const ports: any[] = svc.spec?.ports ?? [];
  if (ports.length === 0) return '<none>';
  return ports.map((p) => (p.nodePort > 0 ? `${p.port}:${p.nodePort}/${p.protocol ?? 'TCP'}` : `${p.port}/${p.protocol ?? 'TCP'}`)).join(',');
}

const servicePrinter: Printer = {
  columns: [
    nameColumn,
    { name: 'Type', description: 'type determines how the Service is exposed.' },
    { name: 'Cluster-IP', description: 'clusterIP is the IP address of the service.' },
    { name: 'External-IP', description: 'externalIPs is a list of IP addresses for which nodes in the cluster will also accept traffic for this service.' },
    { name: 'Port(s)', description: 'The list of ports that are exposed by this service.' },
    ageColumn,
    { name: 'Selector', priority: 1, description: 'Route service traffic to pods with label keys and values matching this selector.' },
  ],
  cells: (svc, now) => [
    svc.metadata?.name ?? '',
    svc.spec?.type ?? '',
    svc.spec?.clusterIPs?.[0] || svc.spec?.clusterIP || '<none>',
    serviceExternalIP(svc),
    servicePorts(svc),
    age(svc, now),
    formatLabels(svc.spec?.selector),
  ],
};

const namespacePrinter: Printer = {
  columns: [nameColumn, { name: 'Status', description: 'The status of the namespace' }, ageColumn],
  cells: (ns, now) => [ns.metadata?.name ?? '', ns.status?.phase ?? '', age(ns, now)],
};

const configMapPrinter: Printer = {
  columns: [nameColumn, { name: 'Data', description: 'Data contains the configuration data.' }, ageColumn],
  cells: (cm, now) => [cm.metadata?.name ?? '', Object.keys(cm.data ?? {}).length + Object.keys(cm.binaryData ?? {}).length, age(cm, now)],
};

const secretPrinter: Printer = {
  columns: [nameColumn, { name: 'Type', description: 'Used to facilitate programmatic handling of secret data.' }, { name: 'Data', description: 'Data contains the secret data.' }, ageColumn],
  cells: (s, now) => [s.metadata?.name ?? '', s.type ?? '', Object.keys(s.data ?? {}).length, age(s, now)],
};

const serviceAccountPrinter: Printer = {
  columns: [nameColumn, { name: 'Secrets', description: 'Secrets is a list of the secrets in the same namespace that pods running using this ServiceAccount are allowed to use.' }, ageColumn],
  cells: (sa, now) => [sa.metadata?.name ?? '', (sa.secrets ?? []).length, age(sa, now)],
};

function eventSource(ev: any): string {
  const component = ev.source?.component || ev.reportingComponent || '';
  const instance = ev.source?.host || ev.reportingInstance || '';
  return instance ? `${component}, ${instance}` : component;
}

const eventPrinter: Printer = {
  columns: [
    { name: 'Last Seen', description: 'The time at which the most recent occurrence of this event was recorded.' },
    { name: 'Type', description: 'Type of this event (Normal, Warning), new types could be added in the future' },
    { name: 'Reason', description: 'This should be a short, machine understandable string that gives the reason for the transition into the object\'s current status.' },
    { name: 'Object', description: 'The object that this event is about.' },
    { name: 'Subobject', priority: 1, description: 'If referring to a piece of an object instead of an entire object, this string should contain a valid JSON/Go field access statement.' },
    { name: 'Source', priority: 1, description: 'The component reporting this event. Should be a short machine understandable string.' },
    { name: 'Message', description: 'A human-readable description of the status of this operation.' },
    { name: 'First Seen', priority: 1, description: 'The time at which the event was first recorded. (Time of server receipt is in TypeMeta.)' },
    { name: 'Count', priority: 1, description: 'The number of times this event has occurred.' },
    { name: 'Name', priority: 1, format: 'name', description: NAME_DOC },
  ],
  cells(ev, now) {
    const first = ev.firstTimestamp ? since(ev.firstTimestamp, now) : since(ev.eventTime, now);
    let last = ev.lastTimestamp ? since(ev.lastTimestamp, now) : first;
    let count = ev.count ?? 0;
    if (ev.series) {
      last = since(ev.series.lastObservedTime, now);
      count = ev.series.count ?? 0;
    } else if (count === 0) {
      count = 1;
    }
    const involved = ev.involvedObject ?? {};
    const kind = String(involved.kind ?? '').toLowerCase();
    const target = involved.name ? `${kind}/${involved.name}` : kind;
    return [last, ev.type ?? '', ev.reason ?? '', target, involved.fieldPath ?? '', eventSource(ev), String(ev.message ?? '').trim(), first, count, ev.metadata?.name ?? ''];
  },
};

function nodeRoles(node: any): string {
  const roles = new Set<string>();
  for (const [k, v] of Object.entries<string>(node.metadata?.labels ?? {})) {
    if (k.startsWith('node-role.kubernetes.io/')) roles.add(k.slice('node-role.kubernetes.io/'.length));
    else if (k === 'kubernetes.io/role') roles.add(v);
  }
  const list = [...roles].filter((r) => r !== '').sort();
  return list.length === 0 ? '<none>' : list.join(',');
}

const nodeAddress = (node: any, type: string) => (node.status?.addresses ?? []).find((a: any) => a.type === type)?.address ?? '<none>';

const nodePrinter: Printer = {
  columns: [
    nameColumn,
    { name: 'Status', description: 'The status of the node' },
    { name: 'Roles', description: 'The roles of the node' },
    ageColumn,
    { name: 'Version', description: 'Kubelet Version reported by the node.' },
    { name: 'Internal-IP', priority: 1, description: 'List of addresses reachable to the node.' },
    { name: 'External-IP', priority: 1, description: 'List of addresses reachable to the node.' },
    { name: 'OS-Image', priority: 1, description: 'OS Image reported by the node from /etc/os-release (e.g. Debian GNU/Linux 7 (wheezy)).' },
    { name: 'Kernel-Version', priority: 1, description: "Kernel Version reported by the node from 'uname -r' (e.g. 3.16.0-0.bpo.4-amd64)." },
    { name: 'Container-Runtime', priority: 1, description: 'ContainerRuntime Version reported by the node through runtime remote API (e.g. containerd://1.4.2).' },
  ],
  cells(node, now) {
    const ready = (node.status?.conditions ?? []).find((c: any) => c.type === 'Ready');
    const status = [ready ? (ready.status === 'True' ? 'Ready' : 'NotReady') : 'Unknown'];
    if (node.spec?.unschedulable) status.push('SchedulingDisabled');
    const info = node.status?.nodeInfo ?? {};
    return [
      node.metadata?.name ?? '',
      status.join(','),
      nodeRoles(node),
      age(node, now),
      info.kubeletVersion ?? '',
      nodeAddress(node, 'InternalIP'),
      nodeAddress(node, 'ExternalIP'),
      info.osImage || '<unknown>',
      info.kernelVersion || '<unknown>',
      info.containerRuntimeVersion || '<unknown>',
    ];
  },
};

const ACCESS_MODE_SHORT: [string, string][] = [
  ['ReadWriteOnce', 'RWO'],
  ['ReadOnlyMany', 'ROX'],
  ['ReadWriteMany', 'RWX'],
  ['ReadWriteOncePod', 'RWOP'],
];

const pvcPrinter: Printer = {
  columns: [
    nameColumn,
    { name: 'Status', description: 'phase represents the current phase of PersistentVolumeClaim.' },
    { name: 'Volume', description: 'volumeName is the binding reference to the PersistentVolume backing this claim.' },
    { name: 'Capacity', description: 'capacity represents the actual resources of the underlying volume.' },
    { name: 'Access Modes', description: 'accessModes contains the actual access modes the volume backing the PVC has.' },
    { name: 'StorageClass', description: 'StorageClass of the pvc' },
    { name: 'VolumeAttributesClass', description: 'VolumeAttributesClass of the pvc' },
    ageColumn,
    { name: 'VolumeMode', priority: 1, description: 'volumeMode defines what type of volume is required by the claim.' },
  ],
  cells(pvc, now) {
    const phase = pvc.metadata?.deletionTimestamp ? 'Terminating' : (pvc.status?.phase ?? '');
    let capacity = '';
    let accessModes = '';
    if (pvc.spec?.volumeName) {
      const modes: string[] = pvc.status?.accessModes ?? [];
      accessModes = ACCESS_MODE_SHORT.filter(([m]) => modes.includes(m)).map(([, s]) => s).join(',');
      capacity = pvc.status?.capacity?.storage ?? '';
    }
    const storageClass = pvc.metadata?.annotations?.['volume.beta.kubernetes.io/storage-class'] ?? pvc.spec?.storageClassName ?? '';
    return [
      pvc.metadata?.name ?? '',
      phase,
      pvc.spec?.volumeName ?? '',
      capacity,
      accessModes,
      storageClass,
      pvc.spec?.volumeAttributesClassName || '<unset>',
      age(pvc, now),
      pvc.spec?.volumeMode ?? '<unset>',
    ];
  },
};

const podTemplatePrinter: Printer = {
  columns: [
    nameColumn,
    { name: 'Containers', description: 'Names of each container in the template.' },
    { name: 'Images', description: 'Images referenced by each container in the template.' },
    { name: 'Pod Labels', description: 'The labels for the pod template.' },
  ],
  cells(pt) {
    const containers: any[] = pt.template?.spec?.containers ?? [];
    return [pt.metadata?.name ?? '', containers.map((c) => c.name).join(','), containers.map((c) => c.image).join(','), formatLabels(pt.template?.metadata?.labels)];
  },
};

const leasePrinter: Printer = {
  columns: [nameColumn, { name: 'Holder', description: 'holderIdentity contains the identity of the holder of a current lease.' }, ageColumn],
  cells: (l, now) => [l.metadata?.name ?? '', l.spec?.holderIdentity ?? '', age(l, now)],
};

const networkPolicyPrinter: Printer = {
  columns: [nameColumn, { name: 'Pod-Selector', description: 'Selects the pods to which this NetworkPolicy object applies.' }, ageColumn],
  cells: (np, now) => [np.metadata?.name ?? '', formatLabelSelector(np.spec?.podSelector), age(np, now)],
};

function bindingPrinter(what: string): Printer {
  return {
    columns: [
      nameColumn,
      { name: 'Role', description: 'RoleRef can reference a Role in the current namespace or a ClusterRole in the global namespace.' },
      ageColumn,
      { name: 'Users', priority: 1, description: `Users in the ${what}` },
      { name: 'Groups', priority: 1, description: `Groups in the ${what}` },
      { name: 'ServiceAccounts', priority: 1, description: `ServiceAccounts in the ${what}` },
    ],
    cells(b, now) {
      const subjects: any[] = b.subjects ?? [];
      const named = (kind: string) => subjects.filter((s) => s.kind === kind);
      return [
        b.metadata?.name ?? '',
        `${b.roleRef?.kind ?? ''}/${b.roleRef?.name ?? ''}`,
        age(b, now),
        named('User').map((s) => s.name).join(', '),
        named('Group').map((s) => s.name).join(', '),
        named('ServiceAccount').map((s) => `${s.namespace ?? ''}/${s.name}`).join(', '),
      ];
    },
  };
}

/** rest.NewDefaultTableConvertor: what the server prints for kinds without a printer (Roles, ClusterRoles...) */
const defaultPrinter: Printer = {
  columns: [
    { name: 'Name', format: 'name', description: NAME_DOC },
    { name: 'Created At', type: 'date', description: CREATED_DOC },
  ],
  cells(obj) {
    const t = Date.parse(obj.metadata?.creationTimestamp ?? '');
    // Go's zero time, formatted as RFC 3339, is what the real server prints for a missing timestamp
    const created = Number.isNaN(t) ? '0001-01-01T00:00:00Z' : new Date(t).toISOString().replace(/\.\d{3}Z$/, 'Z');
    return [obj.metadata?.name ?? '', created];
  },
};

const PRINTERS: Record<string, Printer> = {
  Pod: podPrinter,
  Service: servicePrinter,
  Namespace: namespacePrinter,
  ConfigMap: configMapPrinter,
  Secret: secretPrinter,
  ServiceAccount: serviceAccountPrinter,
  Event: eventPrinter,
  Node: nodePrinter,
  PersistentVolumeClaim: pvcPrinter,
  PodTemplate: podTemplatePrinter,
  Lease: leasePrinter,
  NetworkPolicy: networkPolicyPrinter,
  RoleBinding: bindingPrinter('roleBinding'),
  ClusterRoleBinding: bindingPrinter('clusterRoleBinding'),
};

function rowObject(obj: KubeObject, includeObject: string): unknown {
  if (includeObject === 'None') return undefined;
  if (includeObject === 'Object') return obj;
  return { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: obj.metadata };
}

/**
 * `includeObject` as the query parameter: `None`, `Object`, or `Metadata` (the server's default when absent;
 * kubectl asks for `Object` only when sorting).
 */
export function toTable(
  rt: ResourceType,
  objects: KubeObject[],
  listMeta: { resourceVersion?: string; continue?: string; remainingItemCount?: number },
  includeObject?: string,
): KubeObject {
  const printer = PRINTERS[rt.kind] ?? defaultPrinter;
  const now = Date.now();
  const metadata: Record<string, unknown> = {};
  if (listMeta.resourceVersion !== undefined) metadata.resourceVersion = listMeta.resourceVersion;
  if (listMeta.continue) metadata.continue = listMeta.continue;
  if (listMeta.remainingItemCount !== undefined) metadata.remainingItemCount = listMeta.remainingItemCount;
  const columnDefinitions: TableColumnDefinition[] = printer.columns.map((c) => ({
    name: c.name,
    type: c.type ?? 'string',
    format: c.format ?? '',
    description: c.description ?? '',
    priority: c.priority ?? 0,
  }));
  const rows = objects.map((obj) => {
    const row: Record<string, unknown> = { cells: printer.cells(obj, now) };
    const conditions = printer.conditions?.(obj);
    if (conditions) row.conditions = conditions;
    const object = rowObject(obj, includeObject ?? 'Metadata');
    if (object !== undefined) row.object = object;
    return row;
  });
  return { kind: 'Table', apiVersion: 'meta.k8s.io/v1', metadata: metadata as KubeObject['metadata'], columnDefinitions, rows };
}
