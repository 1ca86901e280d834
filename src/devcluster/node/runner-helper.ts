// The dev cluster's process runner (process-runner.ts): runs each command it is sent and answers with its
// exit code and output. It ends with the dev cluster: when the IPC channel closes, also on a SIGKILL of it.
import { runHere, type RunRequest, type RunResult } from './process-runner.js';

if (!process.send) {
  process.stderr.write('runner-helper: started without an IPC channel; the dev cluster starts this process itself\n');
  process.exit(2);
}

process.on('message', (m: RunRequest & { id: number }) => {
  void runHere(m).then((result: RunResult) => {
    if (process.connected) process.send!({ id: m.id, result });
  });
});
process.on('disconnect', () => process.exit(0));
// Ctrl-C at a terminal signals the whole process group: the dev cluster then still removes its pods through
// this helper, which must outlive it. The closed channel ends the helper.
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => undefined);
