import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { agentFolders, agentSocketsBesides } from '../../../src/shim/agent-sockets.js';

test("the folders of a user's agents: XDG_RUNTIME_DIR, /run/user/<uid> and the temp dir, each once", () => {
  const uid = userInfo().uid;
  assert.deepEqual(agentFolders({ XDG_RUNTIME_DIR: '/x' }), [`/x/berth-${uid}`, `/run/user/${uid}/berth-${uid}`, join(tmpdir(), `berth-${uid}`)]);
  assert.deepEqual(agentFolders({ XDG_RUNTIME_DIR: `/run/user/${uid}` }), [`/run/user/${uid}/berth-${uid}`, join(tmpdir(), `berth-${uid}`)]);
  assert.deepEqual(agentFolders({}), [`/run/user/${uid}/berth-${uid}`, join(tmpdir(), `berth-${uid}`)]);
});

test("the agent sockets besides the one looked at: default-named sockets of every folder and of the named socket's own", () => {
  const root = mkdtempSync(join(tmpdir(), 'berth-sockets-'));
  try {
    const [a, b] = [join(root, 'a'), join(root, 'b')];
    mkdirSync(a);
    mkdirSync(b);
    for (const f of ['shim-agent-0123456789ab.sock', 'shim-agent-0123456789ab.sock.pid', 'shim-agent-0123456789ab.sock.log', 'other.sock'])
      writeFileSync(join(a, f), '');
    writeFileSync(join(b, 'shim-agent-ba9876543210.sock'), '');
    writeFileSync(join(b, 'shim-agent-aaaaaaaaaaaa.sock'), '');
    assert.deepEqual(agentSocketsBesides(join(b, 'shim-agent-aaaaaaaaaaaa.sock'), [a, join(root, 'missing')]), [
      join(a, 'shim-agent-0123456789ab.sock'),
      join(b, 'shim-agent-ba9876543210.sock'),
    ]);
    assert.deepEqual(agentSocketsBesides(join(a, 'shim-agent-0123456789ab.sock'), [a]), []);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
