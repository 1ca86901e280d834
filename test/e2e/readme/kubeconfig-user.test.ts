// A new user asking the dev cluster for a user it does not have (it was started without `--users`, or without
// that one) is told how to add users: `up --users FILE`, and the file's format, ready to paste.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import YAML from 'yaml';
import { berthCli, runCommand, stateDir } from '../harness/cluster.js';

test('dev-cluster kubeconfig --user for an unknown user says how to add users', async () => {
  const r = await runCommand(process.execPath, [berthCli, 'dev-cluster', 'kubeconfig', '--state-dir', stateDir(), '--user', 'newcomer']);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /no user "newcomer"/);
  assert.match(r.stderr, new RegExp(`berth dev-cluster up --state-dir ${stateDir()} --users users.yaml`));
  const example = r.stderr.slice(r.stderr.indexOf('users:\n'), r.stderr.lastIndexOf('\n('));
  const parsed = YAML.parse(example) as { users: Array<{ name: string; rules: unknown[] }> };
  assert.equal(parsed.users[0].name, 'newcomer');
  assert.equal(parsed.users[0].rules.length, 1);
});
