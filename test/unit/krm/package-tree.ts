// What the write-safety tests share: a fingerprint of every file of a folder (hidden ones too, so a
// leftover temp file shows), and exec functions that print fixed bytes whatever they are given.
import { createHash } from 'node:crypto';
import { chmodSync, lstatSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { scratchDir } from '../../util/scratch.js';

/** relative path → `mode sha256` for files, `dir mode` for folders. */
export function hashTree(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (rel: string): void => {
    for (const name of readdirSync(path.join(dir, rel)).sort()) {
      const r = rel ? `${rel}/${name}` : name;
      const st = lstatSync(path.join(dir, r));
      if (st.isDirectory()) {
        out[r] = `dir ${(st.mode & 0o7777).toString(8)}`;
        walk(r);
      } else
        out[r] = `${(st.mode & 0o7777).toString(8)} ${createHash('sha256')
          .update(readFileSync(path.join(dir, r)))
          .digest('hex')}`;
    }
  };
  walk('');
  return out;
}

/** An executable that reads its input and prints exactly `output` (then exits `code`). */
export function printingFunction(output: string | Buffer, code = 0): string {
  const dir = scratchDir('berth-printfn-');
  writeFileSync(path.join(dir, 'out.bin'), output);
  const file = path.join(dir, 'fn.sh');
  writeFileSync(file, `#!/bin/sh\ncat >/dev/null\ncat '${dir}/out.bin'\nexit ${code}\n`);
  chmodSync(file, 0o755);
  return file;
}
