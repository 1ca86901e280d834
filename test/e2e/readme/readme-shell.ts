// Runs documented commands as a user types them: in order, in one bash shell (an `export` carries over to the
// next command), stopping at the first that exits non-zero. The error names that command, where it is written,
// and what it printed; a command with a `# prints TEXT` comment must print a line TEXT.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { runCommand } from '../harness/cluster.js';
import type { ReadmeCommand } from './readme-blocks.js';

/** Starts each command's output in bash's merged stdout+stderr. */
const MARK = '\x1e';

export interface Substitution {
  /** in a documented command, what this matches... */
  command: RegExp;
  /** ...is replaced by this (null: the command is not run) */
  with: string | null;
  why: string;
}

/** Applies `subs`, and fails when one matches no command (a reworded document must not silently skip it). */
export function substitute(commands: ReadmeCommand[], subs: Substitution[]): ReadmeCommand[] {
  for (const s of subs)
    if (!commands.some((c) => s.command.test(c.text)))
      throw new Error(`no documented command matches the substitution ${s.command} (${s.why}): update the test`);
  return commands.flatMap((c) => {
    const s = subs.find((sub) => sub.command.test(c.text));
    if (!s) return [c];
    return s.with === null ? [] : [{ ...c, text: c.text.replace(s.command, s.with) }];
  });
}

function script(commands: ReadmeCommand[], cwd: string): string {
  // background jobs (berth serve...) die with the script: their output pipe would keep the test waiting
  const lines = ['exec 2>&1', `cd ${JSON.stringify(cwd)}`, "trap 'kill $(jobs -p) 2>/dev/null; wait' EXIT"];
  commands.forEach((c, i) =>
    lines.push(`printf '${MARK}%s %s\\n' ${i} "$EPOCHREALTIME"`, c.text, `s=$?; if [ $s -ne 0 ]; then printf '${MARK}failed %s\\n' $s; exit 1; fi`),
  );
  lines.push(`printf '${MARK}done %s\\n' "$EPOCHREALTIME"`);
  return `${lines.join('\n')}\n`;
}

/** bash's $EPOCHREALTIME, whose decimal separator follows the locale */
const seconds = (epoch: string): number => Number(epoch.replace(',', '.'));

export interface Ran {
  output: string;
  seconds: number;
}

/** Runs `commands` in `cwd` with `env`; resolves with each command's output and time, throws on the first failure. */
export async function runDocumented(
  commands: ReadmeCommand[],
  opts: { cwd: string; env: NodeJS.ProcessEnv; scriptDir: string; timeoutMs: number },
): Promise<Ran[]> {
  const file = path.join(opts.scriptDir, `documented-${process.pid}.sh`);
  writeFileSync(file, script(commands, opts.cwd));
  const r = await runCommand('bash', ['--noprofile', '--norc', file], { env: opts.env, timeoutMs: opts.timeoutMs });
  const outputs: string[] = [];
  const startedAt: number[] = [];
  let end = '';
  for (const part of r.stdout.split(new RegExp(`^${MARK}`, 'm')).slice(1)) {
    const started = /^(\d+) ([\d.,]+)\n/.exec(part);
    if (started) {
      outputs[Number(started[1])] = part.slice(started[0].length);
      startedAt[Number(started[1])] = seconds(started[2]);
    } else end = part.trim();
  }
  const [endWord, endedAt] = end.split(' ');
  if (endWord !== 'done') {
    const i = outputs.length - 1;
    const c = commands[i];
    if (!c) throw new Error(`the commands' shell failed before the first command (exit ${r.code}):\n${r.stdout}`);
    throw new Error(
      `${c.where} (block ${c.block}) ${end.startsWith('failed') ? `exited ${end.slice('failed'.length).trim()}` : `ended the shell (exit ${r.code})`}:\n$ ${c.text}\n${outputs[i]}`,
    );
  }
  commands.forEach((c, i) => {
    const printed = outputs[i].split('\n').map((l) => l.trim());
    if (c.expect && !printed.includes(c.expect)) throw new Error(`${c.where}: expected a line "${c.expect}" in the output:\n$ ${c.text}\n${outputs[i]}`);
  });
  return outputs.map((output, i) => ({ output, seconds: (startedAt[i + 1] ?? seconds(endedAt)) - startedAt[i] }));
}

/** A user's environment with HOME at `home`, minus anything that would point berth, kubectl, docker or npm elsewhere. */
export function freshUserEnv(home: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!/^(BERTH_|npm_|KUBECONFIG$|DOCKER_|INIT_CWD$)/i.test(k)) env[k] = v;
  return { ...env, HOME: home };
}
