// Where the shim agents of this user listen, for `berth shim agent status|stop` when none answers at the socket
// they looked at. The default socket depends on XDG_RUNTIME_DIR (else the temp dir) and on the copy of berth
// (agent-frames.ts), not on BERTH_CONTEXT or BERTH_NAMESPACE: one agent serves every context and namespace, each
// call with its caller's settings. A shell with another XDG_RUNTIME_DIR or TMPDIR, or another berth on PATH,
// looks at another socket, so the agents found elsewhere are named with the `--socket` that reaches them.
import { readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { currentUid } from './agent-frames.js';

const AGENT_SOCKET = /^shim-agent-[0-9a-f]+\.sock$/;

/** The folders a default socket of this user can be in: under XDG_RUNTIME_DIR, the usual /run/user/<uid>, the temp dir. */
export function agentFolders(env: NodeJS.ProcessEnv = process.env): string[] {
  const user = `berth-${currentUid()}`;
  const roots = [env.XDG_RUNTIME_DIR, `/run/user/${currentUid()}`, tmpdir()].filter((r): r is string => !!r);
  return [...new Set(roots.map((r) => join(r, user)))];
}

/** The agent sockets in `folders` and beside `socket` (one named with --socket), except `socket` itself; whether each answers is the caller's to ask. */
export function agentSocketsBesides(socket: string, folders: string[]): string[] {
  const found = new Set<string>();
  for (const folder of [...folders, dirname(socket)]) {
    let names: string[];
    try {
      names = readdirSync(folder);
    } catch {
      continue;
    }
    for (const name of names) if (AGENT_SOCKET.test(name)) found.add(join(folder, name));
  }
  found.delete(socket);
  return [...found].sort();
}
