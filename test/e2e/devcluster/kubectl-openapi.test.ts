// kubectl's fallback to /openapi/v2 for kinds no v3 document has: a kind the dev cluster does not serve gets the
// error a real cluster gives, and a `kind: List` file is created item by item with the server's validation.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { deleteNamespace, freshNamespace, kubectl, kubectlOk } from '../harness/cluster.js';

describe('kubectl and /openapi/v2', () => {
  let ns: string;
  before(async () => {
    ns = await freshNamespace('openapi');
  });
  after(async () => {
    await deleteNamespace(ns);
  });

  test('apply of a kind the cluster does not serve names the kind, as against a real cluster', async () => {
    const deployment = `apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: ${ns}}\nspec:\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec: {containers: [{name: web, image: web}]}\n`;
    const r = await kubectl(['apply', '-f', '-'], { input: deployment });
    assert.equal(r.code, 1);
    // before: `error validating data: the server could not find the requested resource; ... --validate=false`
    assert.match(r.stderr, /no matches for kind "Deployment" in version "apps\/v1"\nensure CRDs are installed first/);
    assert.doesNotMatch(r.stderr, /validate=false/);
  });

  test('create -f of a kind: List file creates its items; an unknown field in one is the server\'s strict error', async () => {
    const item = (name: string, extra = '') => `- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: ${name}, namespace: ${ns}}\n  data: {a: "1"}\n${extra}`;
    const list = (...items: string[]) => `apiVersion: v1\nkind: List\nitems:\n${items.join('')}`;
    // before: refused as a whole until --validate=false was given
    const created = await kubectlOk(['create', '-f', '-'], { input: list(item('first'), item('second')) });
    assert.match(created, /configmap\/first created\nconfigmap\/second created/);
    const typo = await kubectl(['create', '-f', '-'], { input: list(item('third', '  datta: {b: "2"}\n')) });
    assert.equal(typo.code, 1);
    assert.match(typo.stderr, /ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: unknown field "datta"/);
    assert.deepEqual((await kubectlOk(['get', 'configmaps', '-n', ns, '-o', 'name'])).trim().split('\n').sort(), ['configmap/first', 'configmap/kube-root-ca.crt', 'configmap/second']);
  });
});
