import assert from 'node:assert/strict';
import { test } from 'node:test';
import { resourceByKind } from '../../../src/devcluster/api/resources.js';
import { matchesFields, matchesLabels, parseFieldSelector, parseLabelSelector } from '../../../src/devcluster/api/selectors.js';
import type { KubeObject } from '../../../src/devcluster/types.js';
import { thrownApiError } from '../../util/api-error.js';

const POD = resourceByKind('Pod');

const rejects = (fn: () => unknown, code: number, message: RegExp | string): void => void thrownApiError(fn, { code, message });

const matches = (sel: string, labels: Record<string, string>) => matchesLabels(parseLabelSelector(sel), labels);

test('label selector operators', () => {
  assert.equal(matches('', { a: '1' }), true);
  assert.equal(matches('app=web', { app: 'web' }), true);
  assert.equal(matches('app==web', { app: 'db' }), false);
  assert.equal(matches('app!=web', { app: 'db' }), true);
  assert.equal(matches('app!=web', {}), true);
  assert.equal(matches('app in (web, db)', { app: 'db' }), true);
  assert.equal(matches('app in (web,db)', {}), false);
  assert.equal(matches('app notin (web,db)', { app: 'x' }), true);
  assert.equal(matches('app notin (web,db)', {}), true);
  assert.equal(matches('app', { app: '' }), true);
  assert.equal(matches('!app', { app: '' }), false);
  assert.equal(matches('!app', { b: '1' }), true);
  assert.equal(matches('app=web,tier', { app: 'web' }), false);
  assert.equal(matches('app=web, tier', { app: 'web', tier: 'x' }), true);
  assert.equal(matches('example.com/role=a', { 'example.com/role': 'a' }), true);
  assert.equal(matches('n>3', { n: '4' }), true);
  assert.equal(matches('n<3', { n: '4' }), false);
  assert.deepEqual(parseLabelSelector('a in (x,y)'), [{ key: 'a', operator: 'In', values: ['x', 'y'] }]);
});

test('invalid label selectors are 400 with the parser wording', () => {
  rejects(() => parseLabelSelector('a in (b'), 400, "unable to parse requirement: found '', expected: ',' or ')'");
  rejects(() => parseLabelSelector('a in b'), 400, "unable to parse requirement: found 'b', expected: '('");
  rejects(() => parseLabelSelector('-bad!=x'), 400, /^unable to parse requirement: key: Invalid value: "-bad": name part must consist of/);
  rejects(() => parseLabelSelector('a=b c'), 400, /found 'c', expected: ',' or 'end of string'/);
  rejects(() => parseLabelSelector('a=-bad-'), 400, /^unable to parse requirement: values\[0\]: Invalid value: "-bad-": a valid label must be an empty string/);
  rejects(() => parseLabelSelector('x/y/z'), 400, /unable to parse requirement: key: Invalid value: "x\/y\/z": a qualified name must consist of/);
});

const pod = (o: Partial<KubeObject>): KubeObject => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'ns' }, ...o });

test('pod field selectors', () => {
  const p = pod({ spec: { nodeName: 'n1', restartPolicy: 'Never' }, status: { phase: 'Running', podIP: '10.88.0.5' } });
  const m = (s: string) => matchesFields(POD, parseFieldSelector(POD, s), p);
  assert.equal(m('metadata.name=p'), true);
  assert.equal(m('metadata.name==q'), false);
  assert.equal(m('metadata.namespace=ns,status.phase=Running'), true);
  assert.equal(m('status.phase!=Running'), false);
  assert.equal(m('spec.nodeName=n1,spec.restartPolicy=Never'), true);
  assert.equal(m('status.podIP=10.88.0.5'), true);
  assert.equal(m('spec.nodeName='), false);
  assert.equal(matchesFields(POD, parseFieldSelector(POD, 'spec.nodeName='), pod({})), true);
});

test('field selectors per kind; unknown fields are 400', () => {
  const EV = resourceByKind('Event');
  const ev: KubeObject = { apiVersion: 'v1', kind: 'Event', metadata: { name: 'e' }, involvedObject: { kind: 'Pod', name: 'p', uid: 'u1' }, reason: 'Pulled', type: 'Normal' };
  assert.equal(matchesFields(EV, parseFieldSelector(EV, 'involvedObject.name=p,involvedObject.kind=Pod,reason=Pulled,type=Normal'), ev), true);
  assert.equal(matchesFields(EV, parseFieldSelector(EV, 'involvedObject.uid=u2'), ev), false);
  const SECRET = resourceByKind('Secret');
  assert.equal(matchesFields(SECRET, parseFieldSelector(SECRET, 'type=Opaque'), { apiVersion: 'v1', kind: 'Secret', metadata: {}, type: 'Opaque' }), true);
  rejects(() => parseFieldSelector(POD, 'spec.containers=x'), 400, 'field label not supported: spec.containers');
  rejects(() => parseFieldSelector(resourceByKind('ConfigMap'), 'type=x'), 400, 'field label not supported: type');
  rejects(() => parseFieldSelector(POD, 'metadata.name'), 400, "invalid selector: 'metadata.name'; can't understand 'metadata.name'");
});
