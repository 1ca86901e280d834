/**
 * One function step: ResourceList out, ResourceList back, results reported kpt-style on stderr. A
 * non-zero exit, an error result, or output that is not one whole ResourceList (function-output.ts)
 * fails the step; the caller then writes nothing.
 */
import type { Writable } from 'node:stream';
import type { KrmObject } from './package.js';
import { checkFunctionOutput } from './function-output.js';
import { formatResult, parseResourceList, serializeResourceList, type KrmResult } from './resource-list.js';
import type { FunctionRunRecord } from './results.js';
import { describeProvider, runFunction, type FunctionProvider, type RunnerOptions } from './runner.js';

export class FunctionFailure extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
    this.name = 'FunctionFailure';
  }
}

export interface StepOutput {
  items: KrmObject[];
  results: KrmResult[];
}

export interface StepOptions {
  /** Set when the function got a selection: the report then says on how many resources it ran, as kpt does. */
  selectedCount?: number;
  /** Every run is recorded here, passed or failed, for --results-dir. */
  records?: FunctionRunRecord[];
}

export async function invokeFunction(
  provider: FunctionProvider,
  items: KrmObject[],
  functionConfig: KrmObject | undefined,
  report: Writable,
  opts: RunnerOptions = {},
  step: StepOptions = {},
): Promise<StepOutput> {
  const name = describeProvider(provider);
  report.write(`[RUNNING] "${name}"${step.selectedCount !== undefined ? ` on ${step.selectedCount} resource(s)` : ''}\n`);
  const started = Date.now();
  const out = await runFunction(provider, serializeResourceList(items, functionConfig), { ...opts, stderr: undefined });
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  let list: { items: KrmObject[]; results?: KrmResult[] };
  if (out.exitCode === 0) {
    try {
      list = checkFunctionOutput(out.stdout, name);
    } catch (err) {
      step.records?.push({ ...recordedName(provider), stderr: out.stderr || undefined, exitCode: 1 });
      report.write(`[FAIL] "${name}" in ${seconds}s\n`);
      if (out.stderr.trim()) report.write(`  Stderr:\n${indented(out.stderr)}\n`);
      throw new FunctionFailure((err as Error).message, 1);
    }
  } else {
    // A failed function's output is read only for its results; its items are never used.
    try {
      list = parseResourceList(out.stdout);
    } catch {
      list = { items: [], results: [] };
    }
  }
  const results = list.results ?? [];
  const failed = out.exitCode !== 0 || results.some((r) => (r.severity ?? 'error') === 'error');
  step.records?.push({ ...recordedName(provider), stderr: out.stderr || undefined, exitCode: out.exitCode, results });
  report.write(`[${failed ? 'FAIL' : 'PASS'}] "${name}" in ${seconds}s\n`);
  for (const r of results) report.write(`  ${formatResult(r)}\n`);
  if (out.stderr.trim()) report.write(`  Stderr:\n${indented(out.stderr)}\n`);
  if (failed) {
    if (out.exitCode !== 0) report.write(`  Exit code: ${out.exitCode}\n`);
    throw new FunctionFailure(`function ${name} failed${out.exitCode !== 0 ? ` with exit code ${out.exitCode}` : ' (error results)'}`, out.exitCode || 1);
  }
  return { items: list.items, results };
}

function indented(stderr: string): string {
  return stderr
    .trimEnd()
    .split('\n')
    .map((l) => `    "${l}"`)
    .join('\n');
}

/** How kpt names the function in results.yaml: the image, or the exec command line as given. */
function recordedName(p: FunctionProvider): { image: string } | { exec: string } {
  return p.kind === 'container' ? { image: p.image } : { exec: [p.path, ...(p.args ?? [])].join(' ') };
}
