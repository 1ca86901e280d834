/** The entries of an archive berth keeps (a copy into a container, a build's context), read in order. */
import { once } from 'node:events';
import { extract, type ExtractEvents, type Header } from 'tar-stream';
import { tarPieces, type KeptTar } from './archive-spill.js';

/** An entry's body as tar-stream gives it: a streamx stream, which node's pipeline does not take as it is. */
export type EntryBody = ExtractEvents['entry'][1];

/** Calls `onEntry` for each entry of a kept archive in order; the entry's body must be read (or resumed) by it. */
export async function eachEntry(tar: KeptTar, onEntry: (header: Header, body: EntryBody) => Promise<void>): Promise<void> {
  if (tar.length === 0) return;
  const ex = extract();
  ex.on('entry', (header, stream, next) => {
    onEntry(header, stream).then(
      () => next(),
      (err: unknown) => ex.destroy(err instanceof Error ? err : new Error(String(err))),
    );
  });
  const done = new Promise<void>((resolve, reject) => {
    ex.on('finish', resolve);
    ex.on('error', reject);
  });
  done.catch(() => undefined); // awaited below; an error while writing ends the loop first
  for await (const piece of tarPieces(tar)) {
    if (ex.destroyed) break;
    if (!ex.write(piece)) await Promise.race([once(ex, 'drain'), done]);
  }
  ex.end(Buffer.alloc(0));
  await done;
}

/** Resolves once the body of an entry whose bytes are not wanted was read. */
export function drained(body: EntryBody): Promise<void> {
  return new Promise((resolve) => {
    body.on('end', resolve);
    body.resume();
  });
}

/** The bytes of the regular file `name` in the archive (a leading `./` ignored), or undefined when it has none. */
export async function readEntry(tar: KeptTar, name: string, limit: number): Promise<Buffer | undefined> {
  const wanted = name.replace(/^\.\//, '');
  let found: Buffer | undefined;
  await eachEntry(tar, async (header, body) => {
    if (found !== undefined || header.type !== 'file' || header.name.replace(/^\.\//, '') !== wanted || (header.size ?? 0) > limit) return drained(body);
    const chunks: Buffer[] = [];
    for await (const chunk of body as AsyncIterable<Buffer>) chunks.push(chunk);
    found = Buffer.concat(chunks);
  });
  return found;
}
