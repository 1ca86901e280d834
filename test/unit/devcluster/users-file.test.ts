// The users file `berth dev-cluster up --users` reads: token users and the RBAC rules the cluster gives them.
import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { loadUsersFile } from '../../../src/devcluster/users-file.js';
import { scratchDir } from '../../util/scratch.js';

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
    assert.throws(
      () => loadUsersFile(p),
      (err: Error) => err.message.startsWith(`users file ${p}: `) && message.test(err.message),
      text,
    );
  }
  assert.throws(() => loadUsersFile(join(dir, 'absent.yaml')), /users file .*absent\.yaml: cannot read/);
});
