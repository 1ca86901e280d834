// A node:test reporter that writes one line per failed test: its file, its name and the first line of its error. The
// harness gives it a file beside the spec reporter and repeats those lines at the end of the run, so the tail of a long
// CI log says which tests failed, not only which phase.
import { relative } from 'node:path';

interface FailEvent {
  type: string;
  data: { name?: string; file?: string; details?: { error?: { failureType?: string; message?: string; cause?: unknown } } };
}

/** The line for a failed test, or none for a suite or file that failed only because a test in it did. */
export function failureLine(event: FailEvent, root = process.cwd()): string | undefined {
  if (event.type !== 'test:fail') return undefined;
  const error = event.data.details?.error;
  if (error?.failureType === 'subtestsFailed') return undefined;
  const cause = error?.cause instanceof Error ? error.cause.message : typeof error?.cause === 'string' ? error.cause : error?.message;
  const firstLine = (cause ?? 'failed').split('\n').find((l) => l.trim()) ?? 'failed';
  const where = event.data.file ? relative(root, event.data.file) : '?';
  return `${where}: ${event.data.name ?? '?'}: ${firstLine.trim().slice(0, 300)}\n`;
}

export default async function* failuresReporter(source: AsyncIterable<FailEvent>): AsyncGenerator<string> {
  for await (const event of source) {
    const line = failureLine(event);
    if (line) yield line;
  }
}
