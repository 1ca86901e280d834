// Channel 4 carries terminal sizes as JSON `{"Width":w,"Height":h}`; the kubelet reads them with a streaming
// JSON decoder, so objects may arrive split across frames or several in one. Go matches field names
// case-insensitively.

export interface TerminalSize {
  width: number;
  height: number;
}

export class ResizeDecoder {
  private pending = '';

  /** the complete sizes in this chunk (plus what was left over before) */
  push(chunk: Buffer): TerminalSize[] {
    this.pending += chunk.toString('utf8');
    const sizes: TerminalSize[] = [];
    for (;;) {
      const start = this.pending.indexOf('{');
      if (start < 0) {
        this.pending = '';
        return sizes;
      }
      const end = this.pending.indexOf('}', start);
      if (end < 0) {
        this.pending = this.pending.slice(start);
        return sizes;
      }
      const text = this.pending.slice(start, end + 1);
      this.pending = this.pending.slice(end + 1);
      const size = parseSize(text);
      if (size) sizes.push(size);
    }
  }
}

function parseSize(text: string): TerminalSize | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const fields = new Map(Object.entries(value).map(([k, v]) => [k.toLowerCase(), v]));
  const width = Number(fields.get('width') ?? 0);
  const height = Number(fields.get('height') ?? 0);
  if (!Number.isFinite(width) || !Number.isFinite(height)) return undefined;
  return { width, height };
}
