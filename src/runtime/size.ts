/**
 * Sizes as docker writes them: binary units (`512m` is 512 MiB), an optional `i` and `b` (`64Mi`,
 * `1GiB`), decimals allowed (`1.5g`). One reader for every berth-side size: `docker run -m` and the
 * settings' mountLimit. (The dev cluster reads Kubernetes quantities itself: it stands alone.)
 */
const SIZE = /^(\d+(?:\.\d+)?)\s*(?:([kmgtp])i?)?b?$/i;
const SUFFIX: Record<string, string> = { '': '', k: 'Ki', m: 'Mi', g: 'Gi', t: 'Ti', p: 'Pi' };
const POWER: Record<string, number> = { '': 0, k: 1, m: 2, g: 3, t: 4, p: 5 };

interface Size {
  number: string;
  unit: string;
}

function readSize(text: string): Size | undefined {
  const m = SIZE.exec(text.trim());
  return m ? { number: m[1], unit: (m[2] ?? '').toLowerCase() } : undefined;
}

/** Bytes (rounded down), or undefined when `text` is not a size. */
export function sizeToBytes(text: string): number | undefined {
  const size = readSize(text);
  return size && Math.floor(Number(size.number) * 1024 ** POWER[size.unit]);
}

/** The same bytes as a Kubernetes quantity (`512m` → `512Mi`, `1.5k` → `1536`), or undefined. */
export function sizeToQuantity(text: string): string | undefined {
  const size = readSize(text);
  if (!size) return undefined;
  return /^\d+$/.test(size.number) ? `${size.number}${SUFFIX[size.unit]}` : String(sizeToBytes(text));
}
