/**
 * berth serve passes megabytes of logs and archives through short-lived Buffers. With V8's default young
 * generation (semi-spaces growing to 8 MiB and more) the little objects holding those buffers survive long
 * enough that the buffers' memory piles up outside the heap, and V8 answers that with full mark-compacts
 * of the whole heap, one or more per 8 MiB log. A 1 MiB semi-space frees them at the next scavenge: on
 * the bench machine berth serve's CPU per 8 MiB log read fell from 65–77 ms to 37–48 ms, and it keeps less
 * memory. The flag takes effect only when the heap is made, so the process replaces itself once.
 */
const FLAG = '--max-semi-space-size=1';

/** The node flags a server process started by berth gets: none when the user opted out or sized it. */
export function serverHeapFlags(execArgv: readonly string[] = process.execArgv, env: NodeJS.ProcessEnv = process.env): string[] {
  if (env.BERTH_DEFAULT_HEAP === '1') return [];
  // a size of the user's own, on node's command line or in NODE_OPTIONS, is left as it is
  if ([...execArgv, ...(env.NODE_OPTIONS ?? '').split(/\s+/)].some((a) => a.startsWith('--max-semi-space-size'))) return [];
  return [FLAG];
}

/** Re-executes this process (same pid, argv and environment) with the flag; nothing when it has it. */
export function useServerHeap(): void {
  const execve = (process as { execve?: (file: string, args: string[], env: NodeJS.ProcessEnv) => never }).execve;
  // process.execve came with Node 22.15 and 23.11; an older node runs with its default heap.
  const flags = serverHeapFlags();
  if (typeof execve !== 'function' || flags.length === 0) return;
  execve.call(process, process.execPath, [process.execPath, ...flags, ...process.execArgv, ...process.argv.slice(1)], process.env);
}
