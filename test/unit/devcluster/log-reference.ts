// The container log format read and written record by record, plainly: the reference that the dev cluster's
// one-pass encoder and renderer (src/devcluster/node/log-format.ts) are checked against.
import { parseTimeNs, streamSelected, type LogStream, type RenderOptions } from '../../../src/devcluster/node/log-format.js';

export interface LogRecord {
  time: string;
  stream: LogStream;
  /** P: the line continues in the next record of this stream; F: the line ended with a newline */
  partial: boolean;
  content: Buffer;
}

export function encodeRecord(r: LogRecord): Buffer {
  return Buffer.concat([Buffer.from(`${r.time} ${r.stream} ${r.partial ? 'P' : 'F'} `), r.content, Buffer.from('\n')]);
}

/** records of a log file; malformed lines (a torn last write) are skipped */
export function parseRecords(data: Buffer): LogRecord[] {
  const out: LogRecord[] = [];
  for (let start = 0; start < data.length; ) {
    const end = data.indexOf(0x0a, start);
    if (end < 0) break;
    const m = /^(\S+) (stdout|stderr) ([PF]) /.exec(data.toString('latin1', start, end));
    if (m) out.push({ time: m[1], stream: m[2] as LogStream, partial: m[3] === 'P', content: data.subarray(start + m[0].length, end) });
    start = end + 1;
  }
  return out;
}

/** the records a request selects, in file order */
export function selectRecords(records: LogRecord[], opts: RenderOptions): LogRecord[] {
  let out = records.filter((r) => streamSelected(r.stream, opts.stream));
  if (opts.sinceNs !== undefined) out = out.filter((r) => parseTimeNs(r.time) >= opts.sinceNs!);
  if (opts.tailLines !== undefined && opts.tailLines >= 0) out = opts.tailLines === 0 ? [] : out.slice(-opts.tailLines);
  return out;
}

/** one record as the API serves it */
export function renderRecord(r: LogRecord, timestamps: boolean | undefined): Buffer {
  return Buffer.concat([...(timestamps ? [Buffer.from(`${r.time} `)] : []), r.content, ...(r.partial ? [] : [Buffer.from('\n')])]);
}
