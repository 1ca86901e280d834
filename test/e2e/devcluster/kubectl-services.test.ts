// NodePort and LoadBalancer Services through kubectl: node ports allocated from 30000-32767 as a 1.32 server
// allocates them (kept on update, free again on delete, refused with the apiserver's sentences when taken or
// out of range), and served on the node (127.0.0.1) as kube-proxy serves them, until the Service is deleted.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { BUSYBOX, deleteNamespace, freshNamespace, kubectl, kubectlOk } from '../harness/cluster.js';

const inRange = (port: number) => Number.isInteger(port) && port >= 30000 && port <= 32767;

/** how a TCP connection to the port ends: the error code, or 'connected' */
function dial(port: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
    socket.once('connect', () => {
      socket.destroy();
      resolve('connected');
    });
  });
}

describe('kubectl and the node ports of Services', () => {
  let ns: string;
  before(async () => {
    ns = await freshNamespace('svc');
  });
  after(async () => {
    await deleteNamespace(ns);
  });

  const nodePortOf = async (name: string, index = 0) => Number(await kubectlOk(['get', 'svc', name, '-n', ns, '-o', `jsonpath={.spec.ports[${index}].nodePort}`]));

  test('a NodePort Service gets a node port, keeps it on update, and gives it back on delete', async () => {
    await kubectlOk(['create', 'service', 'nodeport', 'first', '-n', ns, '--tcp=80:8080']);
    const port = await nodePortOf('first');
    assert.ok(inRange(port), `node port ${port}`);
    const table = await kubectlOk(['get', 'svc', 'first', '-n', ns]);
    assert.match(table, new RegExp(`first\\s+NodePort\\s+10\\.96\\.\\d+\\.\\d+\\s+<none>\\s+80:${port}/TCP`));
    const taken = await kubectl(['create', 'service', 'nodeport', 'second', '-n', ns, '--tcp=81:8080', `--node-port=${port}`]);
    assert.equal(taken.code, 1);
    assert.match(taken.stderr, new RegExp(`Service "second" is invalid: spec\\.ports\\[0\\]\\.nodePort: Invalid value: ${port}: provided port is already allocated`));
    const outside = await kubectl(['create', 'service', 'nodeport', 'second', '-n', ns, '--tcp=81:8080', '--node-port=40000']);
    assert.match(outside.stderr, /Service "second" is invalid: spec\.ports\[0\]\.nodePort: Invalid value: 40000: provided port is not in the valid range\. The range of valid ports is 30000-32767/);
    // a client that sends the Service back without the node port (kubectl replace of its own file) keeps it
    const withoutPort = (await kubectlOk(['get', 'svc', 'first', '-n', ns, '-o', 'yaml'])).replace(/^\s+nodePort: \d+\n/m, '');
    await kubectlOk(['replace', '-f', '-'], { input: withoutPort });
    await kubectlOk(['label', 'svc', 'first', '-n', ns, 'changed=yes']);
    assert.equal(await nodePortOf('first'), port);
    // back to ClusterIP: the server drops the node port it gave, and the port is free for another Service
    await kubectlOk(['patch', 'svc', 'first', '-n', ns, '-p', '{"spec":{"type":"ClusterIP"}}']);
    const clusterIp = JSON.parse(await kubectlOk(['get', 'svc', 'first', '-n', ns, '-o', 'json'])).spec;
    assert.deepEqual([clusterIp.ports[0].nodePort, clusterIp.externalTrafficPolicy], [undefined, undefined]);
    await kubectlOk(['create', 'service', 'nodeport', 'second', '-n', ns, '--tcp=81:8080', `--node-port=${port}`]);
    await kubectlOk(['delete', 'svc', 'second', '-n', ns]);
    await kubectlOk(['create', 'service', 'nodeport', 'third', '-n', ns, '--tcp=82:8080', `--node-port=${port}`]);
    assert.equal(await nodePortOf('third'), port);
  });

  test('a ClusterIP Service may not name a node port; a LoadBalancer gets one per port number and a health check port', async () => {
    const clusterIp = `apiVersion: v1\nkind: Service\nmetadata: {name: plain, namespace: ${ns}}\nspec:\n  ports: [{port: 80, nodePort: 30010}]\n`;
    const refusedPlain = await kubectl(['apply', '-f', '-'], { input: clusterIp });
    assert.match(refusedPlain.stderr, /The Service "plain" is invalid: spec\.ports\[0\]\.nodePort: Forbidden: may not be used when `type` is 'ClusterIP'/);
    const lb = `apiVersion: v1\nkind: Service\nmetadata: {name: dns, namespace: ${ns}}\nspec:\n  type: LoadBalancer\n  externalTrafficPolicy: Local\n  selector: {app: dns}\n  ports: [{name: tcp, port: 53, protocol: TCP}, {name: udp, port: 53, protocol: UDP}, {name: web, port: 80}]\n`;
    await kubectlOk(['apply', '-f', '-'], { input: lb });
    const spec = JSON.parse(await kubectlOk(['get', 'svc', 'dns', '-n', ns, '-o', 'json'])).spec;
    const [tcp, udp, web] = spec.ports.map((p: { nodePort: number }) => p.nodePort);
    assert.ok(inRange(tcp) && inRange(web) && inRange(spec.healthCheckNodePort));
    assert.equal(udp, tcp, 'TCP and UDP of one port number share a node port');
    assert.equal(new Set([tcp, web, spec.healthCheckNodePort]).size, 3);
    assert.equal(spec.allocateLoadBalancerNodePorts, true);
    assert.match(await kubectlOk(['get', 'svc', 'dns', '-n', ns]), new RegExp(`<pending>\\s+53:${tcp}/TCP,53:${tcp}/UDP,80:${web}/TCP`));
    // a re-apply of the same file changes nothing
    await kubectlOk(['apply', '-f', '-'], { input: lb });
    assert.equal(JSON.parse(await kubectlOk(['get', 'svc', 'dns', '-n', ns, '-o', 'json'])).spec.healthCheckNodePort, spec.healthCheckNodePort);
  });

  test('the node port is served on 127.0.0.1 by a ready pod of the Service, until the Service is deleted', async () => {
    await kubectlOk(['run', 'web', '-n', ns, `--image=${BUSYBOX}`, '--labels=app=web', '--port=8080', '--', 'sh', '-c', 'mkdir -p /w && echo served-by-web > /w/index.html && exec httpd -f -p 8080 -h /w']);
    await kubectlOk(['expose', 'pod', 'web', '-n', ns, '--type=NodePort', '--port=80', '--target-port=8080', '--name=web']);
    await kubectlOk(['wait', '--for=condition=Ready', 'pod/web', '-n', ns, '--timeout=60s']);
    const port = await nodePortOf('web');
    const reply = await fetch(`http://127.0.0.1:${port}/index.html`);
    assert.equal(await reply.text(), 'served-by-web\n');
    await kubectlOk(['delete', 'svc', 'web', '-n', ns]);
    assert.equal(await dial(port), 'ECONNREFUSED');
    // busybox httpd as pid 1 ignores SIGTERM: spare the namespace's deletion the 30 s grace period
    await kubectlOk(['delete', 'pod', 'web', '-n', ns, '--now']);
  });
});
