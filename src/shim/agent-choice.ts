// Whether `docker run` goes to the shim agent, in a module of its own: the `docker` process asks it before it
// loads anything else.

/**
 * By default yes; BERTH_SHIM_AGENT=0|false|off|no runs every call in its own berth process.
 */
export function agentEnabled(env: NodeJS.ProcessEnv = process.env): boolean {
  return !/^(0|false|off|no)$/i.test((env.BERTH_SHIM_AGENT ?? '').trim());
}
