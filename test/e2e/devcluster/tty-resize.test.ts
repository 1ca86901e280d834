// Terminal sizes of exec and attach sessions with a tty: kubectl exec -it sends its terminal's size, the Python
// client sends resizes on channel 4, and the process in the container sees them (`stty size`), as on a real node.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { BUSYBOX, contextFor, deleteNamespace, freshNamespace, kubeconfigPath, kubectlOk, repoRoot, runCommand } from '../harness/cluster.js';

const PYTHON = '/usr/bin/python3';
const SCRIPT = join(repoRoot, 'test/e2e/devcluster/fixtures/python-tty.py');

describe('terminal sizes of exec and attach with a tty', () => {
  let ns: string;
  before(async () => {
    ns = await freshNamespace('tty');
    const pods = `apiVersion: v1
kind: Pod
metadata: {name: tty-exec, namespace: ${ns}}
spec:
  terminationGracePeriodSeconds: 1
  containers: [{name: main, image: ${BUSYBOX}, command: [sleep, "3600"]}]
---
apiVersion: v1
kind: Pod
metadata: {name: tty-attach, namespace: ${ns}}
spec:
  terminationGracePeriodSeconds: 1
  containers: [{name: main, image: ${BUSYBOX}, stdin: true, tty: true, command: [sh]}]
`;
    await kubectlOk(['apply', '-f', '-'], { input: pods });
    await kubectlOk(['wait', '--for=condition=Ready', 'pod/tty-exec', 'pod/tty-attach', '-n', ns, '--timeout=30s']);
  });
  after(async () => {
    await deleteNamespace(ns);
  });

  test('kubectl exec -it: the command sees the size of kubectl\'s terminal', async () => {
    // script(1) gives kubectl a terminal of 33 rows and 99 columns
    const inner = `stty rows 33 cols 99; kubectl --kubeconfig ${kubeconfigPath()} exec -it tty-exec -n ${ns} -- stty size`;
    const r = await runCommand('script', ['-qec', inner, '/dev/null'], { timeoutMs: 30_000 });
    assert.equal(r.code, 0, r.stderr);
    // before: "stty: standard input", a terminal of 0 x 0
    assert.match(r.stdout, /^\W*33 99\r?$/m);
  });

  test('python: resizes of an exec and of an attach reach their terminals, sent early or late', async () => {
    const r = await runCommand(PYTHON, [SCRIPT, kubeconfigPath(), contextFor('admin'), ns], { timeoutMs: 60_000 });
    assert.equal(r.code, 0, `python exited ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
    const out = JSON.parse(r.stdout) as { exec: string; attach: string };
    assert.match(out.exec, /stty size\r\n45 123\r\n[\s\S]*stty size; exit 0\r\n20 80\r\n/);
    assert.match(out.attach, /stty size\r\n33 99\r\n/);
  });
});
