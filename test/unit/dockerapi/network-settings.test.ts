// A container's place on a network and a new network: what berth cannot honour is refused, never dropped.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkContainerMacAddress, checkEndpointSettings, checkNetworkCreate } from '../../../src/dockerapi/network-settings.js';

test('endpoint settings: aliases and what the docker CLI sends for flags not given pass; --ip, --mac-address, --link, --driver-opt are refused', () => {
  const unset = { IPAMConfig: { IPv4Address: '', IPv6Address: '', LinkLocalIPs: null }, Links: null, Aliases: ['db'], MacAddress: '', DriverOpts: null, NetworkID: '', EndpointID: '', Gateway: '', IPAddress: '' };
  assert.doesNotThrow(() => checkEndpointSettings('net', unset));
  assert.doesNotThrow(() => checkEndpointSettings('net', null));
  assert.throws(() => checkEndpointSettings('net', { ...unset, IPAMConfig: { IPv4Address: '10.0.0.5' } }), /invalid endpoint settings for network net: IPAMConfig=\{"IPv4Address":"10.0.0.5"\} \(--ip, --ip6, --link-local-ip\) is not supported: a pod's IP is chosen by the cluster's network plugin/);
  assert.throws(() => checkEndpointSettings('net', { IPAMConfig: { LinkLocalIPs: ['169.254.0.9'] } }), /--link-local-ip/);
  assert.throws(() => checkEndpointSettings('net', { MacAddress: '02:42:ac:11:00:02' }), /\(--mac-address\) is not supported/);
  assert.throws(() => checkEndpointSettings('net', { Links: ['db:db'] }), /\(--link\) is not supported/);
  assert.throws(() => checkEndpointSettings('net', { DriverOpts: { k: 'v' } }), (err: { status?: number }) => err.status === 400);
  assert.doesNotThrow(() => checkContainerMacAddress(''));
  assert.throws(() => checkContainerMacAddress('02:42:ac:11:00:02'), /MacAddress="02:42:ac:11:00:02" \(--mac-address\)/);
});

test('network create: a plain bridge network passes; another driver, --internal, --ipv6, --subnet, options and swarm are refused', () => {
  const plain = { Driver: 'bridge', Internal: false, EnableIPv6: false, IPAM: { Driver: 'default', Config: [], Options: {} }, Options: {}, Ingress: false, ConfigOnly: false, Scope: '' };
  assert.doesNotThrow(() => checkNetworkCreate('n', plain));
  assert.doesNotThrow(() => checkNetworkCreate('n', {}));
  const refusals: Array<[Record<string, unknown>, RegExp]> = [
    [{ Driver: 'macvlan' }, /network n: driver "macvlan" \(-d\) cannot be given/],
    [{ Internal: true }, /an internal network \(--internal\) cannot be given: its members would still reach everything/],
    [{ EnableIPv6: true }, /IPv6 \(--ipv6\)/],
    [{ IPAM: { Driver: 'default', Config: [{ Subnet: '10.9.0.0/24' }] } }, /address configuration \[\{"Subnet":"10.9.0.0\/24"\}\] \(--subnet/],
    [{ IPAM: { Driver: 'dhcp' } }, /IPAM driver "dhcp"/],
    [{ Options: { 'com.docker.network.bridge.name': 'br9' } }, /driver options com.docker.network.bridge.name \(-o\)/],
    [{ Scope: 'swarm' }, /a swarm network/],
  ];
  for (const [body, words] of refusals) assert.throws(() => checkNetworkCreate('n', { ...plain, ...body }), words);
});
