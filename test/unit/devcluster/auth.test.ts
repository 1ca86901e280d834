import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { ADMIN_USER, TokenAuthenticator } from '../../../src/devcluster/server/auth.js';
import { loadUsersFile } from '../../../src/devcluster/server/users-file.js';
import { scratchDir } from '../../util/scratch.js';

test('bearer tokens identify users, who all join system:authenticated', () => {
  const auth = new TokenAuthenticator([
    { name: ADMIN_USER.name, token: 'admin-token', groups: ADMIN_USER.groups },
    { name: 'shim', token: 's3cret', groups: ['dev'] },
  ]);
  assert.deepEqual(auth.authenticate('Bearer s3cret'), { name: 'shim', groups: ['dev', 'system:authenticated'] });
  assert.deepEqual(auth.authenticate('bearer admin-token'), { name: 'admin', groups: ['system:masters', 'system:authenticated'] });
  assert.equal(auth.authenticate('Bearer s3cre'), undefined);
  assert.equal(auth.authenticate('Bearer s3cretX'), undefined);
  assert.equal(auth.authenticate('Basic czNjcmV0'), undefined);
  assert.equal(auth.authenticate('Bearer'), undefined);
  assert.equal(auth.authenticate(undefined), undefined);
  const u = auth.authenticate('Bearer s3cret')!;
  u.groups.push('system:masters');
  assert.deepEqual(auth.authenticate('Bearer s3cret')!.groups, ['dev', 'system:authenticated'], 'callers cannot change the stored user');
});

test('users file: parsed, defaulted and validated with the file and field named', (t) => {
  const dir = scratchDir('berth-users-');
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = (name: string, text: string) => {
    const p = join(dir, name);
    writeFileSync(p, text);
    return p;
  };
  const good = file(
    'users.yaml',
    `users:
  - name: shim
    token: s3cret
    groups: [dev]
    rules:
      - apiGroups: [""]
        resources: ["pods", "pods/attach", "pods/log"]
        verbs: ["get", "create"]
        namespaces: ["ci"]
      - nonResourceURLs: ["/healthz"]
        verbs: ["get"]
  - name: reader
`,
  );
  const users = loadUsersFile(good);
  assert.deepEqual(users[0], {
    name: 'shim',
    token: 's3cret',
    groups: ['dev'],
    rules: [
      { apiGroups: [''], resources: ['pods', 'pods/attach', 'pods/log'], verbs: ['get', 'create'], namespaces: ['ci'] },
      { nonResourceURLs: ['/healthz'], verbs: ['get'] },
    ],
  });
  assert.equal(users[1]!.name, 'reader');
  assert.match(users[1]!.token, /^[0-9a-f]{32}$/);
  assert.deepEqual(users[1]!.groups, []);
  assert.deepEqual(users[1]!.rules, []);

  const bad: [string, RegExp][] = [
    ['users:\n  - name: admin\n', /users\[0\]\.name: "admin" is reserved/],
    ['users:\n  - name: a\n  - name: a\n', /users\[1\]\.name: duplicate user "a"/],
    ['users:\n  - token: x\n', /users\[0\]\.name: required/],
    ['users:\n  - name: a\n    rules:\n      - resources: [pods]\n        verbs: [get]\n', /users\[0\]\.rules\[0\]\.apiGroups: required/],
    ['users:\n  - name: a\n    rules:\n      - apiGroups: [""]\n        resources: [pods]\n', /users\[0\]\.rules\[0\]\.verbs: required/],
    ['users:\n  - name: a\n    colour: red\n', /users\[0\]\.colour: unknown field/],
    ['users:\n  - name: a\n    groups: dev\n', /users\[0\]\.groups: must be a list/],
    ['users: {}\n', /users: must be a list/],
    ['users: [\n', /not valid YAML/],
  ];
  for (const [i, [text, message]] of bad.entries()) {
    const p = file(`bad-${i}.yaml`, text);
    assert.throws(() => loadUsersFile(p), (err: Error) => err.message.startsWith(`users file ${p}: `) && message.test(err.message), text);
  }
  assert.throws(() => loadUsersFile(join(dir, 'absent.yaml')), /users file .*absent\.yaml: cannot read/);
});
