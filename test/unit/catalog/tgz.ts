// Builds .tar.gz archives in memory with tar-stream and node:zlib, as release pages ship binaries.
import { gzipSync } from 'node:zlib';
import { pack } from 'tar-stream';

export interface TgzEntry {
  name: string;
  type?: 'file' | 'directory' | 'symlink' | 'link' | 'fifo';
  mode?: number;
  linkname?: string;
  body?: string | Buffer;
}

export async function tgz(entries: TgzEntry[]): Promise<Buffer> {
  const p = pack();
  const chunks: Buffer[] = [];
  const done = new Promise<void>((resolve, reject) => {
    p.on('data', (c: unknown) => void chunks.push(c as Buffer));
    p.on('end', resolve);
    p.on('error', reject);
  });
  for (const { body, ...header } of entries) {
    await new Promise<void>((resolve, reject) => p.entry({ ...header, mode: header.mode ?? 0o644 }, body ?? '', (err) => (err ? reject(err) : resolve())));
  }
  p.finalize();
  await done;
  return gzipSync(Buffer.concat(chunks));
}
