import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execUserIsContainers, execUserRefusal } from '../../../../src/dockerapi/containers/exec-user.js';

test("an exec runs as the container's user: no user, the same user, root where the image's user is unknown", () => {
  assert.ok(execUserIsContainers('', '1000'));
  assert.ok(execUserIsContainers('1000', '1000'));
  assert.ok(execUserIsContainers('1000', '1000:1000'));
  assert.ok(execUserIsContainers('1000:1000', '1000'));
  assert.ok(execUserIsContainers('root', ''));
  assert.ok(execUserIsContainers('0:0', ''));
});

test('an exec as another user is refused, naming the way that works', () => {
  assert.ok(!execUserIsContainers('node', ''));
  assert.ok(!execUserIsContainers('root', '1000'));
  assert.ok(!execUserIsContainers('1000:2000', '1000:1000'));
  assert.match(execUserRefusal('node', ''), /exec as user "node" is not possible: .*image's user.*docker run --user/);
});
