// A container's place on a network and a new network: what berth cannot honour is refused, never dropped.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkContainerMacAddress, checkEndpointSettings, checkNetworkCreate } from '../../../../src/dockerapi/networks/network-settings.js';

test('endpoint settings: aliases and what the docker CLI sends for flags not given pass; --ip, --mac-address, --link, --driver-opt are refused', () => {
  const unset = {
    IPAMConfig: { IPv4Address: '', IPv6Address: '', LinkLocalIPs: null },
    Links: null,
    Aliases: ['db'],
    MacAddress: '',
    DriverOpts: null,
    NetworkID: '',
    EndpointID: '',
    Gateway: '',
    IPAddress: '',
  };
  assert.doesNotThrow(() => checkEndpointSettings('net', unset));
  assert.doesNotThrow(() => checkEndpointSettings('net', null));
  assert.throws(
    () => checkEndpointSettings('net', { ...unset, IPAMConfig: { IPv4Address: '10.0.0.5' } }),
    /invalid endpoint settings for network net: IPAMConfig=\{"IPv4Address":"10.0.0.5"\} \(--ip, --ip6, --link-local-ip\) is not supported: a pod's IP is chosen by the cluster's network plugin/,
  );
  assert.throws(() => checkEndpointSettings('net', { IPAMConfig: { LinkLocalIPs: ['169.254.0.9'] } }), /--link-local-ip/);
  assert.throws(() => checkEndpointSettings('net', { MacAddress: '02:42:ac:11:00:02' }), /\(--mac-address\) is not supported/);
  assert.throws(() => checkEndpointSettings('net', { Links: ['db:db'] }), /\(--link\) is not supported/);
  assert.throws(
    () => checkEndpointSettings('net', { DriverOpts: { k: 'v' } }),
    (err: { status?: number }) => err.status === 400,
  );
  assert.doesNotThrow(() => checkContainerMacAddress(''));
  assert.throws(() => checkContainerMacAddress('02:42:ac:11:00:02'), /MacAddress="02:42:ac:11:00:02" \(--mac-address\)/);
});

test('network create: a plain bridge network passes; another driver, --internal, --ipv6, --subnet, options that change the network and swarm are refused', () => {
  const plain = {
    Driver: 'bridge',
    Internal: false,
    EnableIPv6: false,
    IPAM: { Driver: 'default', Config: [], Options: {} },
    Options: {},
    Ingress: false,
    ConfigOnly: false,
    Scope: '',
  };
  assert.doesNotThrow(() => checkNetworkCreate('n', plain));
  assert.doesNotThrow(() => checkNetworkCreate('n', {}));
  const refusals: Array<[Record<string, unknown>, RegExp]> = [
    [{ Driver: 'macvlan' }, /network n: driver "macvlan" \(-d\) cannot be given/],
    [{ Internal: true }, /an internal network \(--internal\) cannot be given: its members would still reach everything/],
    [{ EnableIPv6: true }, /IPv6 \(--ipv6\)/],
    [{ IPAM: { Driver: 'default', Config: [{ Subnet: '10.9.0.0/24' }] } }, /address configuration \[\{"Subnet":"10.9.0.0\/24"\}\] \(--subnet/],
    [{ IPAM: { Driver: 'dhcp' } }, /IPAM driver "dhcp"/],
    [
      { Options: { 'com.docker.network.bridge.enable_icc': 'false' } },
      /network n: driver option com.docker.network.bridge.enable_icc=false \(-o\) cannot be given: .*containers always reach each other; leave it out/,
    ],
    [{ Scope: 'swarm' }, /a swarm network/],
  ];
  for (const [body, words] of refusals) assert.throws(() => checkNetworkCreate('n', { ...plain, ...body }), words);
});

test('network create -o: host-side bridge options and the values a pod network has pass, an MTU with a warning; the rest refused or parsed as dockerd does', () => {
  const options = (Options: Record<string, string>) => checkNetworkCreate('n', { Options });
  assert.deepEqual(
    options({
      'com.docker.network.bridge.name': 'br-ci',
      'com.docker.network.bridge.trusted_host_interfaces': 'eth1',
      'com.docker.network.bridge.enable_icc': 'true',
      'com.docker.network.bridge.enable_ip_masquerade': '1',
      'com.docker.network.bridge.gateway_mode_ipv4': 'nat',
      'com.docker.network.bridge.host_binding_ipv4': '0.0.0.0',
      'com.example.unknown': 'x',
    }),
    [],
  );
  assert.deepEqual(options({ 'com.docker.network.driver.mtu': '1450' }), [
    "com.docker.network.driver.mtu=1450 is not applied: a pod's interface has the MTU the cluster's network plugin gives it",
  ]);
  const refused: Array<[Record<string, string>, RegExp]> = [
    [{ 'com.docker.network.bridge.enable_ip_masquerade': 'false' }, /enable_ip_masquerade=false \(-o\) cannot be given/],
    [{ 'com.docker.network.bridge.inhibit_ipv4': 'true' }, /inhibit_ipv4=true/],
    [{ 'com.docker.network.bridge.gateway_mode_ipv4': 'routed' }, /gateway_mode_ipv4=routed/],
    [{ 'com.docker.network.bridge.host_binding_ipv4': '127.0.0.1' }, /host_binding_ipv4=127.0.0.1 .*-p 127.0.0.1:8080:80/],
    [{ 'com.docker.network.container_iface_prefix': 'ci' }, /container_iface_prefix=ci/],
    [
      { 'com.docker.network.bridge.enable_icc': 'maybe' },
      /^DockerError: failed to parse com.docker.network.bridge.enable_icc value: maybe \(strconv.ParseBool: parsing "maybe": invalid syntax\)$/,
    ],
    [{ 'com.docker.network.driver.mtu': 'big' }, /failed to parse com.docker.network.driver.mtu value: big \(strconv.Atoi: parsing "big": invalid syntax\)/],
    [{ 'com.docker.network.driver.mtu': '-1' }, /invalid MTU number: -1/],
    [{ 'com.docker.network.bridge.gateway_mode_ipv6': 'bogus' }, /unknown gateway mode bogus/],
  ];
  for (const [o, words] of refused) assert.throws(() => options(o), words);
});
