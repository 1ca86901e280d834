// berth as `docker` (the link `berth shim install DIR` makes, or `berth docker ARGS`): the process kustomize and kpt
// start for every question and every function. It loads as little as the answer needs: `version`, `--help` and
// `image ...` are answered from two small modules; `docker run` goes to the shim agent (the default) as a thin
// client; only a call the agent does not take loads the runtime and @kubernetes/client-node here.
import { agentEnabled } from '../shim/agent-choice.js';
import { answerLocally } from '../shim/answers.js';
import { parseDockerArgv, type DockerCommand } from '../shim/argv.js';
import { noTrace, traceEnabled, traceTo } from '../runtime/trace.js';

/** Runs the shim with docker's own argv; docker's flag grammar is the shim's, so commander stays out of it. */
export async function runAsDocker(argv: string[]): Promise<never> {
  const code = await dockerMain(argv);
  // stdout may still hold the function's output: exit once it is flushed, not before.
  process.stdout.write('', () => process.exit(code));
  return new Promise<never>(() => undefined);
}

async function dockerMain(argv: string[]): Promise<number> {
  let command: DockerCommand | undefined;
  try {
    command = parseDockerArgv(argv, process.env, process.cwd());
  } catch {
    // the in-process shim reports the usage error
  }
  if (command) {
    const answered = answerLocally(command, process.stdout);
    if (answered !== undefined) return answered;
    // A terminal (-t) needs this process's terminal: such a run stays here.
    if (command.kind === 'run' && agentEnabled() && !command.workload.tty) {
      const trace = traceEnabled(process.env) ? traceTo(process.stderr, 0) : noTrace;
      trace('client begins');
      const [{ runThroughAgent }, { defaultAgentSocket }] = await Promise.all([import('./shim-agent-client.js'), import('../shim/agent-frames.js')]);
      const code = await runThroughAgent(argv, defaultAgentSocket(), command.workload.stdin === true, trace);
      if (code !== undefined) return code;
    }
  }
  const { runDockerShim } = await import('../shim/shim.js');
  return runDockerShim(argv, process.env, { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr });
}
