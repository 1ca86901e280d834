/** A tar archive in memory, for tests that upload one (docker cp, PUT /archive). */
import { buffer } from 'node:stream/consumers';
import { pack } from 'tar-stream';

export interface TarEntry {
  name: string;
  type?: 'file' | 'directory' | 'symlink';
  content?: string | Buffer;
  linkname?: string;
  /** Default 0o644. */
  mode?: number;
}

export function tarOf(entries: TarEntry[]): Promise<Buffer> {
  const p = pack();
  for (const e of entries) {
    if (e.type === 'symlink') p.entry({ name: e.name, type: 'symlink', linkname: e.linkname });
    else if (e.type === 'directory') p.entry({ name: e.name, type: 'directory' });
    else p.entry({ name: e.name, mode: e.mode ?? 0o644 }, e.content ?? '');
  }
  p.finalize();
  return buffer(p);
}
