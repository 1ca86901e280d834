// Requests named as kube-apiserver names them (verb and resource), counted, and compared between two readings.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RequestTally, requestKey, tallyBetween } from '../../../src/devcluster/faults/request-tally.js';

test('verbs and resources as the API server names them', () => {
  const k = (m: string, u: string, up = false) => {
    const r = requestKey(m, u, up);
    return `${r.verb} ${r.resource}`;
  };
  assert.equal(k('GET', '/api/v1/namespaces/ns/pods'), 'list pods');
  assert.equal(k('GET', '/api/v1/namespaces/ns/pods?watch=true&resourceVersion=5'), 'watch pods');
  assert.equal(k('GET', '/api/v1/watch/namespaces/ns/pods'), 'watch pods');
  assert.equal(k('GET', '/api/v1/namespaces/ns/pods/p'), 'get pods');
  assert.equal(k('GET', '/api/v1/namespaces/ns/pods/p/log?follow=true'), 'get pods/log');
  assert.equal(k('POST', '/api/v1/namespaces/ns/pods'), 'create pods');
  assert.equal(k('DELETE', '/api/v1/namespaces/ns/pods/p'), 'delete pods');
  assert.equal(k('DELETE', '/api/v1/namespaces/ns/pods'), 'deletecollection pods');
  assert.equal(k('PATCH', '/apis/networking.k8s.io/v1/namespaces/ns/networkpolicies/x'), 'patch networkpolicies');
  assert.equal(k('POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews'), 'create selfsubjectaccessreviews');
  assert.equal(k('GET', '/api/v1/namespaces/ns/pods/p/attach?stdout=1', true), 'connect pods/attach');
  assert.equal(k('GET', '/api/v1/nodes'), 'list nodes');
  assert.equal(k('GET', '/version'), 'get /version');
  assert.equal(k('GET', '/api'), 'get /api');
});

test('a tally counts requests and open watches; between two readings, what happened meanwhile', () => {
  const tally = new RequestTally();
  tally.record({ verb: 'create', resource: 'pods' });
  const first = tally.snapshot();
  const ended = tally.record({ verb: 'watch', resource: 'pods' });
  tally.record({ verb: 'create', resource: 'pods' });
  tally.record({ verb: 'delete', resource: 'pods' });
  assert.deepEqual(tally.snapshot().openWatches, { pods: 1 });
  ended?.();
  ended?.();
  const second = tally.snapshot();
  assert.deepEqual(second.openWatches, {});
  assert.deepEqual(tallyBetween(first, second), { requests: { 'create pods': 1, 'delete pods': 1, 'watch pods': 1 }, total: 3, openWatches: {} });
});
