/**
 * Values of a container create that Kubernetes would refuse only when the pod is made (at start): caught
 * at create, as dockerd does, with a 400 that names the field. Types are checked before (http/request-bodies.ts).
 */
import net from 'node:net';
import { badRequest } from '../http/http.js';
import type { CreateBody } from '../model.js';
import { checkContainerMacAddress, checkEndpointSettings } from '../networks/network-settings.js';

/** dockerd's floor for a memory limit (`Minimum memory limit allowed is 6MB`). */
export const MIN_MEMORY_BYTES = 6 * 1024 * 1024;

const PORT_KEY = /^(\d{1,5})(?:-(\d{1,5}))?(?:\/(tcp|udp|sctp))?$/i;
const HOST_PORT = /^(\d{1,5})(?:-(\d{1,5}))?$/;
/** A pod's hostname is a DNS label (RFC 1123): what Kubernetes accepts. */
const DNS_LABEL = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/i;

const validPort = (p: string | undefined, min = 1): boolean => p === undefined || (Number(p) >= min && Number(p) <= 65535);

function checkPortKey(key: string, where: string): void {
  const m = PORT_KEY.exec(key);
  if (!m || !validPort(m[1]) || !validPort(m[2]) || (m[2] !== undefined && Number(m[2]) < Number(m[1]))) {
    throw badRequest(`invalid port specification: "${key}" in ${where} (give port[/tcp|/udp|/sctp], 1-65535)`);
  }
}

/** Why a UDP or SCTP port cannot be published, for `cannot publish <key>: …`. */
function tcpOnly(key: string): string {
  return `berth publishes TCP ports only (each connection is a Kubernetes port-forward or a TCP connection to the pod, which carry no ${key.split('/')[1].toUpperCase()})`;
}

/**
 * `-P` (PublishAllPorts) publishes every exposed port, the image's too: dockerd publishes UDP ones as well,
 * so a UDP port berth would leave out is refused rather than accepted and never published. Checked once
 * the image's config is merged (its EXPOSE lines are in ExposedPorts then).
 */
export function checkPublishAll(body: CreateBody): void {
  if (!body.HostConfig?.PublishAllPorts) return;
  for (const key of Object.keys(body.ExposedPorts ?? {})) {
    if (/\/(udp|sctp)$/i.test(key)) {
      throw badRequest(
        `cannot publish ${key} (exposed by the image or --expose; -P publishes every exposed port): ${tcpOnly(key)}; publish its TCP ports with -p instead of -P, or reach ${key} from a pod of the cluster`,
      );
    }
  }
}

export function checkCreateValues(body: CreateBody): void {
  for (const [i, kv] of (body.Env ?? []).entries()) {
    const name = kv.includes('=') ? kv.slice(0, kv.indexOf('=')) : kv;
    if (name === '') throw badRequest(`invalid environment variable: "${kv}" (Env[${i}] must be KEY=VALUE with a non-empty KEY)`);
    if (kv.includes('\0')) throw badRequest(`invalid environment variable: Env[${i}] contains a NUL byte`);
  }
  if (body.WorkingDir && !body.WorkingDir.startsWith('/'))
    throw badRequest(`the working directory '${body.WorkingDir}' is invalid, it needs to be an absolute path`);
  const config = body as CreateBody & { MacAddress?: unknown; Domainname?: string };
  checkContainerMacAddress(config.MacAddress);
  if (config.Domainname)
    throw badRequest(`Domainname=${config.Domainname} (--domainname) is not supported: a pod's domain name is the cluster's (its DNS search domains)`);
  for (const [network, settings] of Object.entries(body.NetworkingConfig?.EndpointsConfig ?? {}))
    checkEndpointSettings(network, settings as Record<string, unknown> | null);
  if (body.Hostname && !DNS_LABEL.test(body.Hostname))
    throw badRequest(`invalid hostname "${body.Hostname}": a pod's hostname is a DNS label (letters, digits and '-', at most 63)`);
  for (const key of Object.keys(body.ExposedPorts ?? {})) checkPortKey(key, 'ExposedPorts');
  const hc = body.HostConfig ?? {};
  for (const [key, bindings] of Object.entries(hc.PortBindings ?? {})) {
    checkPortKey(key, 'HostConfig.PortBindings');
    if (/\/(udp|sctp)$/.test(key)) throw badRequest(`cannot publish ${key}: ${tcpOnly(key)}; reach it from a pod of the cluster, or publish a TCP port`);
    for (const b of bindings ?? []) {
      const hp = b.HostPort ?? '';
      const m = HOST_PORT.exec(hp);
      if (hp !== '' && (!m || !validPort(m[1], 0) || !validPort(m[2], 0)))
        throw badRequest(`invalid hostPort: "${hp}" for ${key} (give a port 0-65535, or none for any)`);
      const ip = (b.HostIp ?? '').replace(/^\[|\]$/g, '');
      if (ip !== '' && !net.isIP(ip)) throw badRequest(`invalid host IP "${b.HostIp}" for ${key}: give an IP address`);
    }
  }
  const mountTargets: Array<[string, string]> = [
    ...(hc.Binds ?? []).map((b): [string, string] => [b.split(':')[1] ?? '', `bind ${b}`]),
    ...(hc.Mounts ?? []).map((m): [string, string] => [m.Target ?? '', `mount of type ${m.Type ?? '?'}`]),
    ...Object.keys(hc.Tmpfs ?? {}).map((t): [string, string] => [t, 'tmpfs']),
  ];
  for (const [target, what] of mountTargets) {
    if (target && !target.startsWith('/')) throw badRequest(`invalid mount config for ${what}: invalid mount path: '${target}' mount path must be absolute`);
  }
  const hcheck = body.Healthcheck ?? {};
  for (const field of ['Interval', 'Timeout', 'StartPeriod'] as const) {
    const v = hcheck[field];
    if (v !== undefined && v !== 0 && v < 1e6) throw badRequest(`${field} in Healthcheck cannot be less than 1ms`);
  }
  if (hcheck.Retries !== undefined && hcheck.Retries < 0) throw badRequest('Retries in Healthcheck cannot be negative');
  if (hc.Memory !== undefined && hc.Memory !== 0) {
    if (hc.Memory < 0) throw badRequest(`invalid HostConfig.Memory ${hc.Memory}: give bytes, 0 for no limit`);
    if (hc.Memory < MIN_MEMORY_BYTES) throw badRequest('Minimum memory limit allowed is 6MB');
  }
  if (hc.NanoCpus !== undefined && hc.NanoCpus !== 0) {
    if (hc.NanoCpus < 0) throw badRequest(`invalid HostConfig.NanoCpus ${hc.NanoCpus}: give billionths of a CPU, 0 for no limit`);
    if (hc.NanoCpus < 1e7) throw badRequest("Range of CPUs is from 0.01 to the node's CPUs: HostConfig.NanoCpus must be at least 10000000");
  }
}
