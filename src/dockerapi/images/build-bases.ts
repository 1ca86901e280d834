/**
 * The images berth made that a Dockerfile builds on. The builder's store starts empty and berth's image names live in
 * berth alone, so a `FROM` naming an image berth built or committed would be looked up in registries, where that name
 * means nothing. Such a base is handed to the builder as NAME=PULL-REFERENCE: berth-build pulls the pushed digest and
 * tags it with the name the Dockerfile gives before the build (images/builder/berth-build). Pure.
 */
import { tryNormalizeImage } from './image-ref.js';

export interface MadeBase {
  /** As the Dockerfile names it. */
  name: string;
  /** The pushed digest berth recorded for it. */
  ref: string;
}

/** What the lookup needs of an image record. */
export interface KnownImage {
  tags: ReadonlySet<string>;
  pullRef?: string;
}

/**
 * The image each FROM names, with the build args and the ARG defaults before the first FROM substituted as the
 * builder substitutes them; a FROM naming an earlier stage is left out.
 */
export function fromImages(dockerfile: string, buildArgs: Record<string, string>): string[] {
  const args: Record<string, string> = {};
  const stages = new Set<string>();
  const images: string[] = [];
  let seenFrom = false;
  for (const line of logicalLines(dockerfile)) {
    const arg = /^ARG\s+([A-Za-z_][A-Za-z0-9_]*)(?:=(.*))?$/i.exec(line);
    if (arg && !seenFrom) {
      args[arg[1]!] = buildArgs[arg[1]!] ?? unquote(arg[2] ?? '');
      continue;
    }
    const from = /^FROM\s+(.+)$/i.exec(line);
    if (!from) continue;
    seenFrom = true;
    const words = from[1]!.split(/\s+/).filter((w) => !w.startsWith('--'));
    const image = substitute(words[0] ?? '', args);
    if (image && !stages.has(image.toLowerCase()) && image !== 'scratch') images.push(image);
    if (words[1]?.toLowerCase() === 'as' && words[2]) stages.add(words[2].toLowerCase());
  }
  return images;
}

/** The bases among `images` that berth made (an image record with a pushed digest under that name). */
export function madeBases(dockerfile: string, buildArgs: Record<string, string>, known: Iterable<KnownImage>): MadeBase[] {
  const records = [...known].filter((k) => k.pullRef);
  const bases = new Map<string, MadeBase>();
  for (const name of fromImages(dockerfile, buildArgs)) {
    const norm = tryNormalizeImage(name);
    const made = norm === undefined ? undefined : records.find((r) => r.tags.has(norm));
    if (made) bases.set(name, { name, ref: made.pullRef! });
  }
  return [...bases.values()];
}

/** The Dockerfile's instructions one per line: continuations joined, comments and blank lines dropped. */
function logicalLines(dockerfile: string): string[] {
  return dockerfile
    .replace(/\\\r?\n/g, ' ')
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
}

/** `$NAME`, `${NAME}`, `${NAME:-default}` from the ARGs before the first FROM; unknown ones become empty. */
function substitute(word: string, args: Record<string, string>): string {
  return word.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)/g, (_, braced?: string, fallback?: string, bare?: string) => {
    const value = args[(braced ?? bare)!];
    return value !== undefined && value !== '' ? value : (fallback ?? '');
  });
}

function unquote(value: string): string {
  const v = value.trim();
  return /^(["']).*\1$/.test(v) ? v.slice(1, -1) : v;
}
