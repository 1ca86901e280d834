/**
 * One function step: ResourceList out, ResourceList back, results reported kpt-style on stderr. A
 * non-zero exit or an error result fails the step; the caller then writes nothing.
 */
import type { Writable } from 'node:stream';
import type { KrmObject } from './package.js';
import { formatResult, parseResourceList, serializeResourceList, type KrmResult } from './resource-list.js';
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

export async function invokeFunction(provider: FunctionProvider, items: KrmObject[], functionConfig: KrmObject | undefined, report: Writable, opts: RunnerOptions = {}): Promise<StepOutput> {
  const name = describeProvider(provider);
  report.write(`[RUNNING] "${name}"\n`);
  const started = Date.now();
  const out = await runFunction(provider, serializeResourceList(items, functionConfig), { ...opts, stderr: undefined });
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  let list;
  try {
    list = parseResourceList(out.stdout);
  } catch (err) {
    if (out.exitCode === 0) {
      report.write(`[FAIL] "${name}" in ${seconds}s\n`);
      throw new FunctionFailure(`function ${name}: ${(err as Error).message}`, 1);
    }
    list = { items: [], results: [] };
  }
  const results = list.results ?? [];
  const failed = out.exitCode !== 0 || results.some((r) => r.severity === 'error');
  report.write(`[${failed ? 'FAIL' : 'PASS'}] "${name}" in ${seconds}s\n`);
  for (const r of results) report.write(`  ${formatResult(r)}\n`);
  if (out.stderr.trim()) report.write(`  Stderr:\n${out.stderr.trimEnd().split('\n').map((l) => `    "${l}"`).join('\n')}\n`);
  if (failed) {
    if (out.exitCode !== 0) report.write(`  Exit code: ${out.exitCode}\n`);
    throw new FunctionFailure(`function ${name} failed${out.exitCode !== 0 ? ` with exit code ${out.exitCode}` : ' (error results)'}`, out.exitCode || 1);
  }
  return { items: list.items, results };
}
