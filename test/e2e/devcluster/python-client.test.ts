// The Python kubernetes client (Debian's python3-kubernetes, installed by scripts/setup-machine.sh) against the dev
// cluster. It writes its booleans as Python does (`watch=True`, `stdin=False`), which the server must read as the real
// server's parameter codec does.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { BUSYBOX, contextFor, deleteNamespace, freshNamespace, kubeconfigPath, repoRoot, runCommand } from '../harness/cluster.js';

// Debian's interpreter, the one python3-kubernetes is installed for (a pyenv python3 earlier on PATH lacks it)
const PYTHON = '/usr/bin/python3';
const SCRIPT = join(repoRoot, 'test/e2e/devcluster/fixtures/python-client.py');
const WATCH_SCRIPT = join(repoRoot, 'test/e2e/devcluster/fixtures/python-watch-resume.py');

describe('the Python kubernetes client', () => {
  let ns: string;
  before(async () => {
    ns = await freshNamespace('python');
  });
  after(async () => {
    await deleteNamespace(ns);
  });

  test('watches a pod through ADDED, MODIFIED and DELETED, execs into it, patches a ConfigMap, pages a list', async () => {
    const r = await runCommand(PYTHON, [SCRIPT, kubeconfigPath(), contextFor('admin'), ns, BUSYBOX], { timeoutMs: 120_000 });
    assert.equal(r.code, 0, `python exited ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
    const result = JSON.parse(r.stdout) as { events: { type: string; phase: string | null }[]; exec: string; exec_seconds: number; paged: string[]; patched: { data: Record<string, string>; labels: Record<string, string> } };
    const types = result.events.map((e) => e.type);
    assert.equal(types[0], 'ADDED');
    assert.ok(result.events.some((e) => e.type === 'MODIFIED' && e.phase === 'Running'), JSON.stringify(result.events));
    assert.equal(types[types.length - 1], 'DELETED');
    // the client's stream() returns stdout and stderr together
    assert.match(result.exec, /from-exec/);
    assert.match(result.exec, /to-stderr/);
    // The exec ends with its command: the server ends the connection after its close frame, as the API server
    // does. Waiting for the client's close (30 s) held this client, which never reads a close frame its TLS
    // layer has already buffered.
    assert.ok(result.exec_seconds < 15, `the exec took ${result.exec_seconds.toFixed(1)} s: the server kept the connection after its close frame`);
    assert.deepEqual(result.patched, { data: { a: '1', b: '2' }, labels: { via: 'python' } });
    // the pages of one list: pg5, deleted after the first page, is still in them; pg99, made after it, is not
    assert.deepEqual(result.paged, ['pg0', 'pg1', 'pg2', 'pg3', 'pg4', 'pg5']);
  });

  test('a watch with allow_watch_bookmarks gets its bookmark 2 s before its timeout, and resumes from it', async () => {
    const r = await runCommand(PYTHON, [WATCH_SCRIPT, kubeconfigPath(), contextFor('admin'), ns], { timeoutMs: 60_000 });
    assert.equal(r.code, 0, `python exited ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
    const result = JSON.parse(r.stdout) as { first: [string, string | null][]; resumed: [string, string | null][] };
    // one bookmark in a 4 s watch, as the watch cache sends it (every minute, and 2 s before the deadline)
    assert.deepEqual(result.first, [['ADDED', 'before-1'], ['ADDED', 'before-2'], ['BOOKMARK', null]]);
    assert.deepEqual(result.resumed, [['ADDED', 'after'], ['BOOKMARK', null]]);
  });
});
