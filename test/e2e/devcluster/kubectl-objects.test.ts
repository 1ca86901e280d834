// kubectl's everyday changes to ConfigMaps and Secrets, refused where a 1.32 server refuses them: an immutable
// ConfigMap stays immutable, a Secret keeps its type and has the keys its type needs, metadata the server keeps
// (uid, deletion, the finalizers of an object being deleted) is not changed by a patch.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { deleteNamespace, freshNamespace, kubectl, kubectlOk } from '../harness/cluster.js';

describe('kubectl and the rules of ConfigMaps and Secrets', () => {
  let ns: string;
  before(async () => {
    ns = await freshNamespace('objects');
  });
  after(async () => {
    await deleteNamespace(ns);
  });

  test('an immutable ConfigMap can be neither changed nor made mutable again; its labels can', async () => {
    const yaml = `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: frozen, namespace: ${ns}}\nimmutable: true\ndata: {a: "1"}\nbinaryData: {b: AAE=}\n`;
    await kubectlOk(['apply', '-f', '-'], { input: yaml });
    const frozen = 'field is immutable when `immutable` is set';
    const both = await kubectl(['patch', 'configmap', 'frozen', '-n', ns, '--type', 'merge', '-p', '{"immutable":false,"data":{"a":"2"}}']);
    assert.equal(both.code, 1);
    assert.match(both.stderr, new RegExp(`The ConfigMap "frozen" is invalid: \\n\\* immutable: Forbidden: ${frozen}\\n\\* data: Forbidden: ${frozen}`));
    // before: dropping the flag was accepted, after which any change was
    const unfreeze = await kubectl(['patch', 'configmap', 'frozen', '-n', ns, '--type', 'json', '-p', '[{"op":"remove","path":"/immutable"}]']);
    assert.equal(unfreeze.code, 1);
    assert.match(unfreeze.stderr, new RegExp(`The ConfigMap "frozen" is invalid: immutable: Forbidden: ${frozen}`));
    const binary = await kubectl(['patch', 'configmap', 'frozen', '-n', ns, '--type', 'merge', '-p', '{"binaryData":{"b":"AAI="}}']);
    assert.match(binary.stderr, new RegExp(`binaryData: Forbidden: ${frozen}`));
    await kubectlOk(['label', 'configmap', 'frozen', '-n', ns, 'still=changeable']);
    const live = JSON.parse(await kubectlOk(['get', 'configmap', 'frozen', '-n', ns, '-o', 'json']));
    assert.deepEqual([live.immutable, live.data, live.binaryData, live.metadata.labels], [true, { a: '1' }, { b: 'AAE=' }, { still: 'changeable' }]);
  });

  test('a Secret keeps its type, and a typed Secret has the keys its type needs', async () => {
    await kubectlOk(['create', 'secret', 'generic', 'plain', '-n', ns, '--from-literal=a=1']);
    const retyped = await kubectl(['patch', 'secret', 'plain', '-n', ns, '--type', 'merge', '-p', '{"type":"kubernetes.io/tls"}']);
    assert.equal(retyped.code, 1);
    assert.match(retyped.stderr, /The Secret "plain" is invalid: \n\* type: Invalid value: "kubernetes\.io\/tls": field is immutable\n\* data\[tls\.crt\]: Required value\n\* data\[tls\.key\]: Required value/);
    assert.equal(await kubectlOk(['get', 'secret', 'plain', '-n', ns, '-o', 'jsonpath={.type}']), 'Opaque');
    const tls = await kubectl(['create', 'secret', 'generic', 'half-tls', '-n', ns, '--type=kubernetes.io/tls', '--from-literal=tls.crt=x']);
    assert.equal(tls.code, 1);
    assert.match(tls.stderr, /Secret "half-tls" is invalid: data\[tls\.key\]: Required value/);
    const ssh = await kubectl(['create', 'secret', 'generic', 'no-key', '-n', ns, '--type=kubernetes.io/ssh-auth', '--from-literal=ssh-privatekey=']);
    assert.match(ssh.stderr, /Secret "no-key" is invalid: data\[ssh-privatekey\]: Required value/);
    const pull = `apiVersion: v1\nkind: Secret\nmetadata: {name: pull, namespace: ${ns}}\ntype: kubernetes.io/dockerconfigjson\nstringData: {.dockerconfigjson: "{"}\n`;
    const notJson = await kubectl(['apply', '-f', '-'], { input: pull });
    assert.match(notJson.stderr, /The Secret "pull" is invalid: data\[\.dockerconfigjson\]: Invalid value: "<secret contents redacted>": unexpected end of JSON input/);
    const names = await kubectlOk(['get', 'secrets', '-n', ns, '-o', 'name']);
    assert.deepEqual(names.trim().split('\n'), ['secret/plain']);
    // the kubectl way to make one is accepted
    await kubectlOk(['create', 'secret', 'docker-registry', 'registry', '-n', ns, '--docker-username=u', '--docker-password=p']);
  });

  test('an object being deleted takes no new finalizer; finalizer names, owner references, uid and deletionTimestamp are checked', async () => {
    const patch = (p: string) => kubectl(['patch', 'configmap', 'held', '-n', ns, '--type', 'merge', '-p', p]);
    await kubectlOk(['create', 'configmap', 'held', '-n', ns]);
    assert.match((await patch('{"metadata":{"uid":"not-its-uid"}}')).stderr, /The ConfigMap "held" is invalid: metadata\.uid: Invalid value: "not-its-uid": field is immutable/);
    assert.match((await patch('{"metadata":{"deletionTimestamp":"2020-01-01T00:00:00Z"}}')).stderr, /metadata\.deletionTimestamp: Invalid value: 2020-01-01 00:00:00 \+0000 UTC: field is immutable/);
    assert.match((await patch('{"metadata":{"finalizers":["keep"]}}')).stderr, /metadata\.finalizers\[0\]: Invalid value: "keep": name is neither a standard finalizer name nor is it fully qualified/);
    const owner = await patch('{"metadata":{"ownerReferences":[{"apiVersion":"v1","kind":"ConfigMap","name":"owner","uid":""}]}}');
    assert.match(owner.stderr, /metadata\.ownerReferences\.uid: Invalid value: "": uid must not be empty/);
    await kubectlOk(['patch', 'configmap', 'held', '-n', ns, '--type', 'merge', '-p', '{"metadata":{"finalizers":["example.com/keep"]}}']);
    await kubectlOk(['delete', 'configmap', 'held', '-n', ns, '--wait=false']);
    // before: accepted, so a finalizer could be swapped for another and the deletion held forever
    const added = await patch('{"metadata":{"finalizers":["example.com/keep","example.com/new"]}}');
    assert.equal(added.code, 1);
    assert.match(added.stderr, /metadata\.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers \[\]string\{"example\.com\/new"\}/);
    const live = JSON.parse(await kubectlOk(['get', 'configmap', 'held', '-n', ns, '-o', 'json']));
    assert.deepEqual(live.metadata.finalizers, ['example.com/keep']);
    assert.equal(live.metadata.ownerReferences, undefined);
    // removing the last finalizer lets the deletion finish
    await kubectlOk(['patch', 'configmap', 'held', '-n', ns, '--type', 'json', '-p', '[{"op":"remove","path":"/metadata/finalizers"}]']);
    await kubectlOk(['wait', '--for=delete', 'configmap/held', '-n', ns, '--timeout=10s']);
  });

  test('metadata.generateName is a mutable field: a patch sets and clears it, a bad prefix is refused', async () => {
    const generateName = () => kubectlOk(['get', 'configmap', 'named', '-n', ns, '-o', 'jsonpath={.metadata.generateName}']);
    await kubectlOk(['create', 'configmap', 'named', '-n', ns]);
    // before: the merge and strategic patches were answered 200 and the field stayed unset
    await kubectlOk(['patch', 'configmap', 'named', '-n', ns, '--type', 'merge', '-p', '{"metadata":{"generateName":"gen-"}}']);
    assert.equal(await generateName(), 'gen-');
    await kubectlOk(['patch', 'configmap', 'named', '-n', ns, '-p', '{"metadata":{"generateName":"other-"}}']);
    assert.equal(await generateName(), 'other-');
    const bad = await kubectl(['patch', 'configmap', 'named', '-n', ns, '--type', 'merge', '-p', '{"metadata":{"generateName":"Bad_"}}']);
    assert.match(bad.stderr, /The ConfigMap "named" is invalid: metadata\.generateName: Invalid value: "Bad_": a lowercase RFC 1123 subdomain/);
    await kubectlOk(['patch', 'configmap', 'named', '-n', ns, '--type', 'json', '-p', '[{"op":"remove","path":"/metadata/generateName"}]']);
    assert.equal(await generateName(), '');
  });

  test('labels and annotations emptied by kubectl label/annotate KEY- are gone from the object, not left as {}', async () => {
    await kubectlOk(['create', 'configmap', 'emptied', '-n', ns]);
    await kubectlOk(['label', 'configmap', 'emptied', '-n', ns, 'a=1']);
    await kubectlOk(['annotate', 'configmap', 'emptied', '-n', ns, 'b=2']);
    assert.match((await kubectl(['label', 'configmap', 'emptied', '-n', ns, 'a=3'])).stderr, /'a' already has a value \(1\), and --overwrite is false/);
    await kubectlOk(['label', 'configmap', 'emptied', '-n', ns, 'a-']);
    await kubectlOk(['annotate', 'configmap', 'emptied', '-n', ns, 'b-']);
    const meta = JSON.parse(await kubectlOk(['get', 'configmap', 'emptied', '-n', ns, '-o', 'json'])).metadata;
    // before: "labels":{} and "annotations":{}; ObjectMeta's maps are omitempty on a real server
    assert.deepEqual(Object.keys(meta).sort(), ['creationTimestamp', 'name', 'namespace', 'resourceVersion', 'uid']);
  });
});
