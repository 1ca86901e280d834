// Node ports of NodePort and LoadBalancer Services, given out as the real service registry does
// (pkg/registry/core/service/storage/alloc.go and rest.go, portallocator/allocator.go): one per distinct port
// number from --service-node-port-range (30000-32767), a requested one kept if free, and a healthCheckNodePort
// for a LoadBalancer with externalTrafficPolicy Local. The ports in use are read from the stored Services, so a
// deleted Service's ports are free again without bookkeeping of our own.
import type { KubeObject } from '../types.js';
import { internalError, invalid } from './errors.js';
import { resourceByKind } from './resources.js';
import { fieldInvalid } from './validation-fields.js';

export const NODE_PORT_MIN = 30000;
export const NODE_PORT_MAX = 32767;
const RANGE_TEXT = `${NODE_PORT_MIN}-${NODE_PORT_MAX}`;
/**
 * The lower band a dynamic allocation leaves for requested ports while the upper one has room (KEP-3668,
 * calculateRangeOffset: min(max(size/32, 16), 128)).
 */
const STATIC_BAND = Math.min(Math.max(Math.floor((NODE_PORT_MAX - NODE_PORT_MIN + 1) / 32), 16), 128);

type Spec = Record<string, any>;

export const needsNodePort = (spec: Spec | undefined) => spec?.type === 'NodePort' || spec?.type === 'LoadBalancer';
export const needsHealthCheckNodePort = (spec: Spec | undefined) => spec?.type === 'LoadBalancer' && spec?.externalTrafficPolicy === 'Local';
const shouldAllocate = (spec: Spec) => spec.type === 'NodePort' || (spec.type === 'LoadBalancer' && spec.allocateLoadBalancerNodePorts !== false);

/** every node port a Service holds: its ports' and its health check's */
export function nodePortsOf(svc: KubeObject): number[] {
  const ports = ((svc.spec?.ports ?? []) as any[]).map((p) => p?.nodePort).filter((n): n is number => Number.isInteger(n) && n > 0);
  const hc = svc.spec?.healthCheckNodePort;
  return Number.isInteger(hc) && hc > 0 ? [...ports, hc] : ports;
}

/** one allocation, as the registry's PortAllocationOperation: refuses a taken or out-of-range port */
class NodePortOperation {
  constructor(private readonly taken: Set<number>) {}

  /** undefined when allocated, else the allocator's error sentence */
  allocate(port: number): string | undefined {
    if (!Number.isInteger(port) || port < NODE_PORT_MIN || port > NODE_PORT_MAX) {
      return `provided port is not in the valid range. The range of valid ports is ${RANGE_TEXT}`;
    }
    if (this.taken.has(port)) return 'provided port is already allocated';
    this.taken.add(port);
    return undefined;
  }

  /** a random free port of the upper band, else of the lower one */
  allocateNext(): number | undefined {
    return this.randomFree(NODE_PORT_MIN + STATIC_BAND, NODE_PORT_MAX) ?? this.randomFree(NODE_PORT_MIN, NODE_PORT_MIN + STATIC_BAND - 1);
  }

  private randomFree(low: number, high: number): number | undefined {
    const size = high - low + 1;
    const start = Math.floor(Math.random() * size);
    for (let i = 0; i < size; i++) {
      const port = low + ((start + i) % size);
      if (!this.taken.has(port)) {
        this.taken.add(port);
        return port;
      }
    }
    return undefined;
  }
}

function nextPort(op: NodePortOperation): number {
  const port = op.allocateNext();
  if (port === undefined) throw internalError('failed to allocate a nodePort: range is full');
  return port;
}

function refuse(svc: KubeObject, field: string, value: number, why: string): never {
  throw invalid(resourceByKind('Service'), svc.metadata.name ?? '', [fieldInvalid(field, value, why)]);
}

/** initNodePorts: ports with the same number share one node port; a requested one is taken as asked */
function allocateForCreate(svc: KubeObject, op: NodePortOperation): void {
  const ports: any[] = svc.spec.ports ?? [];
  const byPortNumber = new Map<number, number>();
  ports.forEach((p, i) => {
    if (!p || typeof p !== 'object' || (!p.nodePort && !shouldAllocate(svc.spec))) return;
    const given = byPortNumber.get(p.port);
    if (given === undefined) {
      const requested = ports.find((q) => q?.port === p.port && q.nodePort)?.nodePort as number | undefined;
      if (requested) {
        const error = op.allocate(requested);
        if (error) refuse(svc, `spec.ports[${i}].nodePort`, requested, error);
      }
      p.nodePort = requested || nextPort(op);
      byPortNumber.set(p.port, p.nodePort);
    } else if (p.nodePort !== given) {
      if (!p.nodePort) p.nodePort = given;
      else {
        const error = op.allocate(p.nodePort);
        if (error) refuse(svc, `spec.ports[${i}].nodePort`, p.nodePort, error);
      }
    }
  });
}

/** updateNodePorts: the Service keeps the node ports it had; new ones are allocated */
function allocateForUpdate(svc: KubeObject, old: KubeObject, op: NodePortOperation): void {
  const oldPorts = new Set(((old.spec?.ports ?? []) as any[]).map((p) => p?.nodePort).filter(Boolean));
  const allocatedHere = new Set<number>();
  const seen = new Set<string>();
  ((svc.spec.ports ?? []) as any[]).forEach((p, i) => {
    if (!p || typeof p !== 'object' || (!p.nodePort && !shouldAllocate(svc.spec))) return;
    if (!p.nodePort) p.nodePort = nextPort(op);
    else if (!oldPorts.has(p.nodePort) && !allocatedHere.has(p.nodePort)) {
      const error = op.allocate(p.nodePort);
      if (error) refuse(svc, `spec.ports[${i}].nodePort`, p.nodePort, error);
      allocatedHere.add(p.nodePort);
    }
    const key = `${p.protocol ?? 'TCP'} ${p.nodePort}`;
    if (seen.has(key)) throw internalError(`duplicate nodePort: {${key}}`);
    seen.add(key);
  });
}

function allocateHealthCheck(svc: KubeObject, op: NodePortOperation): void {
  const requested = svc.spec.healthCheckNodePort;
  if (!requested) {
    const port = op.allocateNext();
    if (port === undefined) throw internalError('failed to allocate a HealthCheck NodePort 0: range is full');
    svc.spec.healthCheckNodePort = port;
    return;
  }
  const error = op.allocate(requested);
  if (error) throw internalError(`failed to allocate requested HealthCheck NodePort ${requested}: ${error}`);
}

/** node ports for a new Service; `taken` are those other Services hold */
export function allocateCreateNodePorts(svc: KubeObject, taken: Set<number>): void {
  if (!svc.spec || typeof svc.spec !== 'object') return;
  const op = new NodePortOperation(new Set(taken));
  if (needsNodePort(svc.spec)) allocateForCreate(svc, op);
  if (needsHealthCheckNodePort(svc.spec)) allocateHealthCheck(svc, op);
}

/**
 * patchAllocatedValues: a client that resends the Service without the node ports the server gave it (kubectl
 * replace of the file it created from) keeps them, matched by port name.
 */
function keepAllocatedNodePorts(svc: KubeObject, old: KubeObject): void {
  if (needsNodePort(old.spec) && needsNodePort(svc.spec)) {
    const ports: any[] = (svc.spec.ports ?? []).filter((p: any) => p && typeof p === 'object');
    const used = new Set(ports.map((p) => p.nodePort).filter(Boolean));
    const oldByName = new Map<string, number>(((old.spec.ports ?? []) as any[]).map((p) => [p?.name ?? '', p?.nodePort]));
    for (const p of ports) {
      const oldPort = oldByName.get(p.name ?? '');
      if (!p.nodePort && oldPort && !used.has(oldPort)) p.nodePort = oldPort;
    }
  }
  if (needsHealthCheckNodePort(old.spec) && needsHealthCheckNodePort(svc.spec) && !svc.spec.healthCheckNodePort) {
    svc.spec.healthCheckNodePort = old.spec.healthCheckNodePort;
  }
}

/**
 * dropTypeDependentFields (the strategy's PrepareForUpdate): a Service changed to a type that needs no node
 * ports loses those the server gave it, when the client left them as they were.
 */
function dropTypeDependentFields(svc: KubeObject, old: KubeObject): void {
  const spec = svc.spec;
  const oldNodePorts = JSON.stringify(((old.spec?.ports ?? []) as any[]).map((p) => p?.nodePort ?? 0));
  const newNodePorts = JSON.stringify(((spec.ports ?? []) as any[]).map((p) => p?.nodePort ?? 0));
  if (needsNodePort(old.spec) && !needsNodePort(spec) && oldNodePorts === newNodePorts) {
    for (const p of spec.ports ?? []) if (p && typeof p === 'object') delete p.nodePort;
  }
  if (needsHealthCheckNodePort(old.spec) && !needsHealthCheckNodePort(spec) && spec.healthCheckNodePort === old.spec.healthCheckNodePort) {
    delete spec.healthCheckNodePort;
  }
  if (old.spec?.type === 'LoadBalancer' && spec.type !== 'LoadBalancer' && spec.allocateLoadBalancerNodePorts === old.spec.allocateLoadBalancerNodePorts) {
    delete spec.allocateLoadBalancerNodePorts;
  }
  if (externallyAccessible(old.spec) && !externallyAccessible(spec) && spec.externalTrafficPolicy === old.spec.externalTrafficPolicy) {
    delete spec.externalTrafficPolicy;
  }
}

export function externallyAccessible(spec: Spec | undefined): boolean {
  return needsNodePort(spec) || (spec?.type === 'ClusterIP' && (spec?.externalIPs ?? []).length > 0);
}

/** node ports for an updated Service; `taken` are those other Services hold */
export function allocateUpdateNodePorts(svc: KubeObject, old: KubeObject, taken: Set<number>): void {
  if (!svc.spec || typeof svc.spec !== 'object') return;
  keepAllocatedNodePorts(svc, old);
  const op = new NodePortOperation(new Set(taken));
  if (needsNodePort(svc.spec)) allocateForUpdate(svc, old, op);
  const neededCheck = needsHealthCheckNodePort(old.spec);
  if (!neededCheck && needsHealthCheckNodePort(svc.spec)) allocateHealthCheck(svc, op);
  else if (neededCheck && needsHealthCheckNodePort(svc.spec) && svc.spec.healthCheckNodePort !== old.spec.healthCheckNodePort) {
    refuse(svc, 'spec.healthCheckNodePort', svc.spec.healthCheckNodePort, 'cannot change healthCheckNodePort on loadBalancer service with externalTraffic=Local during update');
  }
  dropTypeDependentFields(svc, old);
}
