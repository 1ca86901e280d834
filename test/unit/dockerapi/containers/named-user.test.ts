import { test } from 'node:test';
import assert from 'node:assert/strict';
import { UserNotFound, isNamedUser, isValidUser, resolveUser } from '../../../../src/dockerapi/containers/named-user.js';

const PASSWD = 'root:x:0:0:root:/root:/bin/sh\n# a comment\nnode:x:1000:1000:node:/home/node:/bin/sh\nnobody:x:65534:65534:nobody:/:/sbin/nologin\n';
const GROUP = 'root:x:0:\nstaff:x:50:node\nnogroup:x:65534:\n';

test('names need a lookup, numbers do not', () => {
  assert.deepEqual([undefined, '', '1000', '1000:1000', 'node', 'node:staff', '1000:staff'].map(isNamedUser), [false, false, false, false, true, true, true]);
  assert.deepEqual(['node', 'node:staff', '1000', 'a.b-c_1', 'x:y:z', 'a b', '-x', ''].map(isValidUser), [true, true, true, true, false, false, false, false]);
});

test('a name is its passwd uid and gid; a group by name or number replaces the gid, as dockerd resolves them', () => {
  assert.equal(resolveUser('node', PASSWD, GROUP), '1000:1000');
  assert.equal(resolveUser('nobody', PASSWD, GROUP), '65534:65534');
  assert.equal(resolveUser('node:staff', PASSWD, GROUP), '1000:50');
  assert.equal(resolveUser('node:7', PASSWD, GROUP), '1000:7');
  assert.equal(resolveUser('1000:staff', PASSWD, GROUP), '1000:50');
  assert.equal(resolveUser('4242:staff', PASSWD, GROUP), '4242:50', 'a uid passwd lacks is still that uid');
});

test("a name the image lacks is dockerd's error", () => {
  assert.throws(() => resolveUser('postgres', PASSWD, GROUP), new UserNotFound('unable to find user postgres: no matching entries in passwd file'));
  assert.throws(() => resolveUser('node:wheel', PASSWD, GROUP), new UserNotFound('unable to find group wheel: no matching entries in group file'));
  assert.throws(() => resolveUser('node', '', ''), UserNotFound, 'no passwd file at all');
});
