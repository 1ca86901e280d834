/**
 * The archive of a file feed (file-feed.ts): what a face writes into it, then the marker its receiver checks
 * (feed-receiver.ts), padded to a whole record. A failure of the writer (a file that cannot be read) ends the
 * stream with that failure, so the receiver never sees the marker.
 */
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { pack, type Header } from 'tar-stream';
import { paddedTarStream } from './files.js';

/** An entry's header: its name, and what tar-stream fills in otherwise. */
export type EntryHeader = Partial<Header> & { name: string };

/** Adds one entry; a body given as a stream needs `header.size`. Resolves once the entry is in the archive. */
export type AddEntry = (header: EntryHeader, body?: Buffer | Readable) => Promise<void>;

/** What a face puts into its feed, entry by entry, in order. */
export type FeedContent = (add: AddEntry) => Promise<void>;

export function feedTar(content: FeedContent, marker: string): Readable {
  const p = pack();
  const out = paddedTarStream(p);
  const add: AddEntry = (header, body) => {
    if (body === undefined || Buffer.isBuffer(body)) {
      const data = body ?? Buffer.alloc(0);
      const sized = header.type === undefined || header.type === 'file' ? { ...header, size: data.length } : header;
      return new Promise((resolve, reject) => p.entry(sized as Header, data, (err) => (err ? reject(err) : resolve())));
    }
    return pipeline(body, p.entry(header as Header));
  };
  void content(add)
    .then(() => add({ name: marker, type: 'file', mode: 0o444 }))
    .then(
      () => p.finalize(),
      (err: unknown) => out.destroy(err instanceof Error ? err : new Error(String(err))),
    );
  return out;
}
