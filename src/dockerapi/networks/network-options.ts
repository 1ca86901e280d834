/**
 * `docker network create -o KEY=VALUE` and compose's `driver_opts`, as dockerd's bridge driver reads them
 * (libnetwork's bridge labels): a berth network is a set of names on the cluster's pod network, so an option
 * passes when it only shapes the host's side of a bridge (its name, its firewall) or asks for what a pod has
 * anyway (containers that reach each other and the outside, IPv4, NAT); one that would change what the
 * containers see or reach is refused, naming it, where leaving it out would make a different network than the
 * one asked for. An option the bridge driver does not read passes, as dockerd keeps and ignores it. Values are
 * checked as dockerd parses them. Pure.
 */
import { isIP } from 'node:net';
import { badRequest } from '../http/http.js';

const BRIDGE = 'com.docker.network.bridge.';
const POD_NETWORK = "berth's networks are names on the cluster's one pod network";

/** boolean options and the value a pod network has: the other value is refused, saying why */
const BOOLEANS: Record<string, { has: boolean; why: string }> = {
  [`${BRIDGE}enable_icc`]: { has: true, why: `${POD_NETWORK}, where containers always reach each other` },
  [`${BRIDGE}enable_ip_masquerade`]: { has: true, why: `${POD_NETWORK}, whose pods reach the outside as the cluster routes them` },
  [`${BRIDGE}inhibit_ipv4`]: { has: false, why: "a pod's IPv4 address is the cluster's network plugin's" },
  [`${BRIDGE}default_bridge`]: { has: false, why: "the default network is berth's own `bridge`" },
  'com.docker.network.enable_ipv6': { has: false, why: "a pod's addresses are the cluster's network plugin's" },
};

/** options that only shape the host's bridge or its firewall, which berth has none of: kept for inspect */
const HOST_SIDE = new Set([`${BRIDGE}name`, `${BRIDGE}trusted_host_interfaces`]);

const GATEWAY_MODES = new Set(['nat', 'nat-unprotected', 'routed', 'isolated']);

/** refused whatever their value, with why */
const REFUSED: Record<string, string> = {
  'com.docker.network.container_iface_prefix': "a pod's interface is named by the cluster's network plugin",
  'com.docker.network.host_ipv4': "the source address of what pods send out is the cluster's",
  'com.docker.network.host_ipv6': "the source address of what pods send out is the cluster's",
};

/** dockerd's words for a value its bridge driver cannot parse */
function parseError(key: string, value: string, why: string): never {
  throw badRequest(`failed to parse ${key} value: ${value} (${why})`);
}

/** Go's strconv.ParseBool */
function parseBool(key: string, value: string): boolean {
  if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(value)) return true;
  if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(value)) return false;
  return parseError(key, value, `strconv.ParseBool: parsing "${value}": invalid syntax`);
}

/**
 * Checks a network create's options; throws a 400 for a value dockerd cannot parse or one berth cannot honour.
 * Returns the create's warnings (an MTU, which the pods' interfaces take from the network plugin).
 */
export function judgeNetworkOptions(network: string, options: Record<string, string>): string[] {
  const refuse = (key: string, value: string, why: string): never => {
    throw badRequest(`network ${network}: driver option ${key}=${value} (-o) cannot be given: ${why}; leave it out`);
  };
  const warnings: string[] = [];
  for (const [key, value] of Object.entries(options)) {
    if (HOST_SIDE.has(key)) continue;
    const bool = BOOLEANS[key];
    if (bool) {
      if (parseBool(key, value) !== bool.has) refuse(key, value, bool.why);
      continue;
    }
    if (key === 'com.docker.network.driver.mtu') {
      if (!/^[+-]?\d+$/.test(value)) parseError(key, value, `strconv.Atoi: parsing "${value}": invalid syntax`);
      if (Number(value) < 0) throw badRequest(`invalid MTU number: ${Number(value)}`);
      warnings.push(`${key}=${value} is not applied: a pod's interface has the MTU the cluster's network plugin gives it`);
      continue;
    }
    if (key === `${BRIDGE}gateway_mode_ipv4` || key === `${BRIDGE}gateway_mode_ipv6`) {
      if (!GATEWAY_MODES.has(value)) throw badRequest(`unknown gateway mode ${value}`);
      if (value !== 'nat') refuse(key, value, `${POD_NETWORK}, reached from outside the cluster only through published ports`);
      continue;
    }
    if (key === `${BRIDGE}host_binding_ipv4`) {
      if (!isIP(value)) parseError(key, value, 'nil ip');
      if (value !== '0.0.0.0' && value !== '::') refuse(key, value, 'berth publishes a port on the address -p names (give it there: -p 127.0.0.1:8080:80)');
      continue;
    }
    if (key in REFUSED) refuse(key, value, REFUSED[key]);
  }
  return warnings;
}
