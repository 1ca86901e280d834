// pods/log query options refused as a 1.32 API server refuses them (PodLogOptions validation, with KEP-3288's
// split streams): 422 before the pod is looked up, every problem named. berth serve relies on the same rules
// (`docker logs --tail` with stdout and stderr apart: test/e2e/serve/docker-cli.test.ts).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { apiRequest } from '../harness/cluster.js';

const logOf = (query: string) => apiRequest('GET', `/api/v1/namespaces/default/pods/nowhere/log?${query}`);

describe('pods/log options', () => {
  test('tailLines beside a specific stream is forbidden, as KEP-3288 has it "for now"', async () => {
    const r = await logOf('stream=Stdout&tailLines=2');
    assert.equal(r.code, 422, JSON.stringify(r.body));
    const body = r.body;
    assert.equal(body.reason, 'Invalid');
    assert.match(body.message, /PodLogOptions "nowhere" is invalid: : Forbidden: `tailLines` and specific `stream` are mutually exclusive for now/);
    assert.deepEqual(body.details.causes.map((c: { reason: string }) => c.reason), ['FieldValueForbidden']);
  });

  test('tailLines with stream=All is a plain log query (404 for a pod that does not exist)', async () => {
    assert.equal((await logOf('stream=All&tailLines=2')).code, 404);
  });

  test('several problems are listed together', async () => {
    const r = await logOf('tailLines=-1&limitBytes=0&sinceSeconds=5&sinceTime=2026-01-01T00:00:00Z');
    assert.equal(r.code, 422);
    const body = r.body;
    assert.deepEqual(body.details.causes.map((c: { field: string }) => c.field), ['tailLines', 'limitBytes', '']);
    assert.match(body.message, /^PodLogOptions "nowhere" is invalid: \[tailLines: Invalid value: -1: must be greater than or equal to 0, limitBytes: Invalid value: 0: must be greater than 0, : Forbidden: at most one of `sinceTime` or `sinceSeconds` may be specified\]$/);
  });
});
