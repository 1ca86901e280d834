/**
 * What a client may ask of a container's place on a network (create's NetworkingConfig.EndpointsConfig, network
 * connect's EndpointConfig, the older Config.MacAddress) and of a new network (network create): a pod's address
 * and interface are the cluster's network plugin's, and a berth network is a set of names, not a bridge. What berth
 * cannot honour is refused with a 400 naming the flag, where it was dropped before and the container or network
 * made without it (a container on an `--internal` network that reaches the internet, `--ip` answered by another IP).
 * Zero values (what the docker CLI sends for flags not given) pass. Pure.
 */
import { badRequest } from '../http/http.js';
import { isZero } from '../containers/host-config.js';
import { judgeNetworkOptions } from './network-options.js';

const POD_ADDRESS = "a pod's IP is chosen by the cluster's network plugin; find the container by its name or a --network-alias";
const POD_INTERFACE = "a pod's interface is made by the cluster's network plugin";

/** EndpointSettings fields a client may set, with the flag that sets them and why berth cannot. */
const ENDPOINT_REFUSED: Record<string, { flag: string; why: string }> = {
  IPAMConfig: { flag: '--ip, --ip6, --link-local-ip', why: POD_ADDRESS },
  MacAddress: { flag: '--mac-address', why: POD_INTERFACE },
  Links: { flag: '--link', why: 'links are not supported; put the containers on a network and use its aliases' },
  DriverOpts: { flag: '--driver-opt', why: `${POD_INTERFACE}, which takes no driver options` },
};

/** One network's endpoint settings of a create or connect; only `Aliases` maps (and fields clients read back). */
export function checkEndpointSettings(network: string, settings: Record<string, unknown> | null | undefined): void {
  for (const [field, value] of Object.entries(settings ?? {})) {
    const refused = ENDPOINT_REFUSED[field];
    if (refused && !isZero(value)) {
      throw badRequest(
        `invalid endpoint settings for network ${network}: ${field}=${JSON.stringify(value)} (${refused.flag}) is not supported: ${refused.why}`,
      );
    }
  }
}

/** Config.MacAddress: where clients of API 1.43 and older put `--mac-address`. */
export function checkContainerMacAddress(mac: unknown): void {
  if (!isZero(mac)) throw badRequest(`MacAddress=${JSON.stringify(mac)} (--mac-address) is not supported: ${POD_INTERFACE}`);
}

export interface NetworkCreateSettings {
  Driver?: string;
  Internal?: boolean;
  EnableIPv6?: boolean;
  IPAM?: { Driver?: string; Config?: unknown[] | null; Options?: Record<string, string> | null } | null;
  Options?: Record<string, string> | null;
  ConfigFrom?: unknown;
  ConfigOnly?: boolean;
  Ingress?: boolean;
  Scope?: string;
}

/**
 * A network create's settings: berth's networks are names the members resolve (alias Services and /etc/hosts
 * lines) on the cluster's one pod network, so `bridge` is the only driver, and what would shape a network of its
 * own (subnets, IPv6, isolation from the outside, driver options that change what members see: network-options.ts)
 * is refused rather than left out. Returns the create's warnings.
 */
export function checkNetworkCreate(name: string, body: NetworkCreateSettings): string[] {
  const refuse = (what: string, why: string): never => {
    throw badRequest(`network ${name}: ${what} cannot be given: ${why}`);
  };
  const driver = body.Driver ?? '';
  if (driver !== '' && driver !== 'bridge')
    refuse(`driver "${driver}" (-d)`, "berth's networks are names on the cluster's pod network; leave out -d or give bridge");
  if (body.Internal)
    refuse(
      'an internal network (--internal)',
      'its members would still reach everything the pod network reaches: berth cannot cut a network off from the outside (a --network none container has no network at all)',
    );
  if (body.EnableIPv6) refuse('IPv6 (--ipv6)', "a pod's addresses are the cluster's network plugin's");
  const ipam = body.IPAM ?? {};
  if (!isZero(ipam.Config))
    refuse(
      `address configuration ${JSON.stringify(ipam.Config)} (--subnet, --ip-range, --gateway, --aux-address)`,
      "a pod's IP is chosen by the cluster's network plugin",
    );
  if ((ipam.Driver ?? '') !== '' && ipam.Driver !== 'default')
    refuse(`IPAM driver "${ipam.Driver}" (--ipam-driver)`, "a pod's IP is chosen by the cluster's network plugin");
  if (!isZero(ipam.Options)) refuse(`IPAM options (--ipam-opt)`, "a pod's IP is chosen by the cluster's network plugin");
  if (body.Ingress || body.ConfigOnly || !isZero(body.ConfigFrom) || (body.Scope ?? '') === 'swarm')
    refuse('a swarm network (--ingress, --config-only, --config-from, --scope swarm)', 'berth runs no swarm');
  return judgeNetworkOptions(name, body.Options ?? {});
}
