/**
 * Reading DER back (X.690), as far as berth needs it: the elements of a certificate it did not make (a CA given by
 * the user), to name that CA as a certificate's issuer in its own bytes and to find its key's identifier.
 */

export interface DerElement {
  tag: number;
  /** The element's content, without tag and length. */
  content: Buffer;
  /** The whole element: tag, length and content. */
  whole: Buffer;
}

/** The element at `offset`; throws on a length that runs past the buffer or a form DER does not allow. */
export function readDer(buf: Buffer, offset = 0): DerElement {
  if (offset + 2 > buf.length) throw new Error('DER: the data ends inside an element');
  const tag = buf[offset];
  if ((tag & 0x1f) === 0x1f) throw new Error('DER: high tag numbers are not read here');
  let length = buf[offset + 1];
  let head = 2;
  if (length & 0x80) {
    const bytes = length & 0x7f;
    if (bytes === 0 || bytes > 4) throw new Error('DER: an indefinite or oversized length');
    if (offset + 2 + bytes > buf.length) throw new Error('DER: the data ends inside a length');
    length = buf.readUIntBE(offset + 2, bytes);
    head += bytes;
  }
  const end = offset + head + length;
  if (end > buf.length) throw new Error('DER: an element runs past the end of the data');
  return { tag, content: buf.subarray(offset + head, end), whole: buf.subarray(offset, end) };
}

/** The elements inside a constructed element (a SEQUENCE, a SET, an explicit tag), in order. */
export function derChildren(element: DerElement): DerElement[] {
  const out: DerElement[] = [];
  for (let at = 0; at < element.content.length;) {
    const child = readDer(element.content, at);
    out.push(child);
    at += child.whole.length;
  }
  return out;
}
