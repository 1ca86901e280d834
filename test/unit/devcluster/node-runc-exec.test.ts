// exec through runc (runc-exec.ts) against a stand-in runc: the process's streams and exit code pass
// through; runc's own failures, read from its JSON log, become 127/126 or an error as podman exec's did.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { text } from 'node:stream/consumers';
import { runcExecSession, type RuncRuntime } from '../../../src/devcluster/node/runc-exec.js';
import { scratchDir } from '../../util/scratch.js';

const ID = 'a'.repeat(64);
// --root R --log L --log-format json exec ID cmd...
const FAKE_RUNC = `#!/bin/sh
[ "$7" = exec ] && [ "$8" = "${ID}" ] || { echo "unexpected args: $*" >&2; exit 99; }
log=$4
shift 8
case "$1" in
  nosuch) echo '{"level":"error","msg":"exec failed: unable to start container process: exec: \\"nosuch\\": executable file not found in $PATH","time":"t"}' > "$log"; exit 255 ;;
  notexec) echo '{"level":"error","msg":"exec failed: unable to start container process: exec: \\"/etc/passwd\\": permission denied","time":"t"}' > "$log"; exit 255 ;;
  gone) echo '{"level":"error","msg":"exec failed: container does not exist","time":"t"}' > "$log"; exit 255 ;;
esac
"$@"; exit $?  # runc waits for the process and exits with its status (128 + signal when killed)
`;

function runtime(t: { after(fn: () => void): void }): RuncRuntime {
  const dir = scratchDir('berth-runc-');
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const binary = join(dir, 'runc');
  writeFileSync(binary, FAKE_RUNC);
  chmodSync(binary, 0o755);
  return { binary, root: join(dir, 'root'), logDir: dir };
}

const exec = (rt: RuncRuntime, command: string[], stdin?: string) => {
  const s = runcExecSession(rt, ID, { container: 'c', command, stdin: stdin !== undefined, stdout: true, stderr: true, tty: false });
  if (stdin !== undefined) s.stdin!.end(stdin);
  return Promise.all([text(s.stdout!), text(s.stderr!), s.done]);
};

test('the process gets stdin and gives its output and exit code', async (t) => {
  const rt = runtime(t);
  assert.deepEqual(await exec(rt, ['sh', '-c', 'cat; echo to-err >&2; exit 7'], 'hello\n'), ['hello\n', 'to-err\n', { exitCode: 7 }]);
  assert.deepEqual(await exec(rt, ['sh', '-c', 'exit 255']), ['', '', { exitCode: 255 }]);
  assert.deepEqual((await exec(rt, ['sh', '-c', 'kill -TERM $$']))[2], { exitCode: 143 });
});

test("runc's own failures: not found 127, not executable 126 (reason on stderr), anything else an error; no log left", async (t) => {
  const rt = runtime(t);
  const [, nfErr, nf] = await exec(rt, ['nosuch']);
  assert.deepEqual(nf, { exitCode: 127 });
  assert.match(nfErr, /^OCI runtime exec failed: exec failed: .*"nosuch": executable file not found/);
  assert.deepEqual((await exec(rt, ['notexec']))[2], { exitCode: 126 });
  const [, goneErr, gone] = await exec(rt, ['gone']);
  assert.equal(goneErr, '');
  assert.deepEqual(gone, { error: 'error executing command in container: exec failed: container does not exist' });
  assert.deepEqual(readdirSync(rt.logDir).filter((f) => f.endsWith('.json')), []);
});
