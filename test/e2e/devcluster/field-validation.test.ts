// Server-side field validation through kubectl: `--validate=strict` refuses a typo'd field with the real
// server's message, `--validate=warn` prints its warning and drops the field, `--validate=ignore` drops it silently.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { BUSYBOX, deleteNamespace, freshNamespace, kubectl, kubectlOk } from '../harness/cluster.js';

const podWithTypo = (ns: string, name: string) => `apiVersion: v1
kind: Pod
metadata: {name: ${name}, namespace: ${ns}}
spec:
  containers:
  - name: main
    image: ${BUSYBOX}
    imagePullPolicyy: Never
    command: ["sleep", "1"]
`;

describe('kubectl --validate against the dev cluster', () => {
  let ns: string;
  before(async () => {
    ns = await freshNamespace('fieldval');
  });
  after(async () => {
    await deleteNamespace(ns);
  });

  test('a value of the wrong JSON type is a 400 in encoding/json\'s words, whatever the directive; nothing stored or changed', async () => {
    const bad = JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'typed' }, data: { a: 1 } });
    const created = await kubectl(['create', '--raw', `/api/v1/namespaces/${ns}/configmaps`, '-f', '-'], { input: bad });
    assert.notEqual(created.code, 0);
    assert.match(created.stderr, /ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal number into Go struct field ConfigMap\.data of type string/);
    assert.match((await kubectl(['get', 'cm', 'typed', '-n', ns])).stderr, /not found/);
    await kubectlOk(['create', 'configmap', 'typed', '-n', ns, '--from-literal=a=x']);
    const patched = await kubectl(['patch', 'cm', 'typed', '-n', ns, '--type=merge', '-p', '{"data":{"n":5}}']);
    assert.notEqual(patched.code, 0);
    assert.match(patched.stderr, /json: cannot unmarshal number into Go struct field ConfigMap\.data of type string/);
    assert.deepEqual(JSON.parse(await kubectlOk(['get', 'cm', 'typed', '-n', ns, '-o', 'json'])).data, { a: 'x' });
  });

  test('--validate=strict: a typo is a 400 naming the field, nothing is created', async () => {
    const r = await kubectl(['apply', '--validate=strict', '-f', '-'], { input: podWithTypo(ns, 'strict') });
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /Error from server \(BadRequest\).*Pod in version "v1" cannot be handled as a Pod: strict decoding error: unknown field "spec\.containers\[0\]\.imagePullPolicyy"/);
    assert.match((await kubectl(['get', 'pod', 'strict', '-n', ns])).stderr, /not found/);
  });

  test('--validate=warn: kubectl prints the warning, the pod is created without the field', async () => {
    const r = await kubectl(['apply', '--validate=warn', '-f', '-'], { input: podWithTypo(ns, 'warned') });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /Warning: unknown field "spec\.containers\[0\]\.imagePullPolicyy"/);
    const stored = JSON.parse(await kubectlOk(['get', 'pod', 'warned', '-n', ns, '-o', 'json']));
    assert.equal(stored.spec.containers[0].imagePullPolicyy, undefined);
  });

  test('--validate=ignore: no warning, field dropped; a strict apply of a change to an existing pod is a patch refused the same way', async () => {
    const r = await kubectl(['apply', '--validate=ignore', '-f', '-'], { input: podWithTypo(ns, 'ignored') });
    assert.equal(r.code, 0, r.stderr);
    assert.doesNotMatch(r.stderr, /Warning/);
    const changed = podWithTypo(ns, 'ignored').replace('metadata: {name: ignored,', 'metadata: {labelz: {a: b}, name: ignored,');
    const patch = await kubectl(['apply', '--validate=strict', '-f', '-'], { input: changed });
    assert.notEqual(patch.code, 0);
    assert.match(patch.stderr, /Error from server \(BadRequest\).*strict decoding error: unknown field "metadata\.labelz"/s);
  });
});
