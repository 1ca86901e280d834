/** Networks: records; aliases become Services and pod hostAliases (../networks.ts). */
import { badRequest, type Router } from '../http/http.js';
import { since } from '../http/api-version.js';
import { parseFilters } from '../filters/filters.js';
import { networkListFilter } from '../filters/network-filters.js';
import { pruneFilter } from '../filters/prune-filters.js';
import { checkBody } from '../http/request-bodies.js';
import type { NetworkCreateBody } from '../networks/networks.js';
import type { Engine } from '../engine.js';
import { checkEndpointSettings, checkNetworkCreate, type NetworkCreateSettings } from '../networks/network-settings.js';

export function networkRoutes(r: Router, engine: Engine): void {
  r.op('NetworkList', 'GET', '/networks', (call) => {
    const wanted = networkListFilter(parseFilters(call.query.get('filters')), (id) => engine.networks.hasActiveEndpoints(id));
    const list = [...engine.networks.values()].filter(wanted);
    call.send(
      200,
      list.map((n) => networkJson(engine, n.id, call.version)),
    );
  });
  r.op('NetworkInspect', 'GET', '/networks/{id}', (call, [id]) => {
    const n = networkJson(engine, id, call.version);
    call.send(200, since(call.version, '1.52') ? { ...n, Status: ipamStatus(ipamConfig(engine, engine.networks.find(id).name)) } : n);
  });
  r.op('NetworkCreate', 'POST', '/networks/create', async (call) => {
    const body = checkBody<NetworkCreateBody & NetworkCreateSettings>('networkCreate', await call.json(false));
    const warnings = checkNetworkCreate(body.Name ?? '', body);
    const n = engine.networks.create(body);
    call.send(201, { Id: n.id, Warning: warnings.join('\n') });
  });
  r.op('NetworkConnect', 'POST', '/networks/{id}/connect', async (call, [id]) => {
    const body = checkBody<{ Container?: string; EndpointConfig?: { Aliases?: string[] | null } | null }>('networkConnect', await call.json(false));
    if (!body.Container) throw badRequest('Container is required');
    checkEndpointSettings(id, body.EndpointConfig);
    await engine.connect(id, body.Container, body.EndpointConfig?.Aliases ?? []);
    call.send(200);
  });
  r.op('NetworkDisconnect', 'POST', '/networks/{id}/disconnect', async (call, [id]) => {
    const body = checkBody<{ Container?: string }>('networkDisconnect', await call.json(false));
    if (!body.Container) throw badRequest('Container is required');
    await engine.disconnect(id, body.Container);
    call.send(200);
  });
  r.op('NetworkDelete', 'DELETE', '/networks/{id}', (call, [id]) => {
    engine.networks.remove(id);
    call.send(204);
  });
  r.op('NetworkPrune', 'POST', '/networks/prune', (call) => {
    const wanted = pruneFilter(parseFilters(call.query.get('filters')));
    const deleted: string[] = [];
    for (const n of [...engine.networks.values()]) {
      // in use (a running container on it): kept, as dockerd keeps a network with endpoints
      if (n.builtin || engine.networks.hasActiveEndpoints(n.id) || !wanted(n)) continue;
      engine.networks.remove(n.id);
      deleted.push(n.name);
    }
    call.send(200, { NetworksDeleted: deleted });
  });
}

function networkJson(engine: Engine, id: string, version: string): Record<string, unknown> {
  const n = engine.networks.find(id);
  const containers: Record<string, unknown> = {};
  for (const c of engine.containers.values()) {
    if (c.networks.has(n.id))
      containers[c.id] = { Name: c.name, EndpointID: c.id.slice(0, 24), MacAddress: '', IPv4Address: c.podIP ? `${c.podIP}/32` : '', IPv6Address: '' };
  }
  return {
    Name: n.name,
    Id: n.id,
    Created: n.created.toISOString(),
    Scope: 'local',
    Driver: n.driver,
    ...(since(version, '1.48') ? { EnableIPv4: true } : {}),
    EnableIPv6: false,
    IPAM: { Driver: 'default', Options: null, Config: ipamConfig(engine, n.name) },
    Internal: n.internal,
    Attachable: true,
    Ingress: false,
    ConfigFrom: { Network: '' },
    ConfigOnly: false,
    Containers: containers,
    Options: n.options ?? {},
    Labels: n.labels,
  };
}

/** Clients in a container (testcontainers) take the bridge gateway as the host of published ports. */
function ipamConfig(engine: Engine, name: string): Array<{ Subnet: string; Gateway: string }> {
  return name === 'bridge' ? [{ Subnet: `${engine.publishAddress}/32`, Gateway: engine.publishAddress }] : [];
}

/**
 * Inspect's Status (API 1.52): dockerd's counts of the addresses its IPAM gave out in each subnet. berth gives out
 * none: a container's address is its pod's, from the cluster's network plugin, so every subnet shows none in use.
 */
function ipamStatus(config: Array<{ Subnet: string }>): Record<string, unknown> {
  return { IPAM: { Subnets: Object.fromEntries(config.map((c) => [c.Subnet, { IPsInUse: 0, DynamicIPsAvailable: 0 }])) } };
}
