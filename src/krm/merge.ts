/**
 * Applies a function's output object onto the YAML node it came from, changing only what changed, so
 * comments, key order, quoting and flow style of untouched parts survive (functions see plain data and
 * return plain data; the package keeps its text).
 */
import { isMap, isScalar, isSeq, isPair, Scalar, type Document, type Node } from 'yaml';

type Plain = null | boolean | number | string | Plain[] | { [k: string]: Plain };

export function mergeValue(doc: Document, node: unknown, value: unknown): Node {
  if (isMap(node) && isPlainObject(value)) {
    const wanted = value;
    node.items = node.items.filter((p) => isPair(p) && Object.prototype.hasOwnProperty.call(wanted, keyOf(p.key)));
    for (const [k, v] of Object.entries(wanted)) {
      const pair = node.items.find((p) => keyOf(p.key) === k);
      if (pair) pair.value = mergeValue(doc, pair.value, v);
      else node.items.push(doc.createPair(k, v) as (typeof node.items)[number]);
    }
    return node;
  }
  if (isSeq(node) && Array.isArray(value)) {
    node.items = node.items.slice(0, value.length);
    value.forEach((v, i) => {
      if (i < node.items.length) node.items[i] = mergeValue(doc, node.items[i], v);
      else node.items.push(doc.createNode(v));
    });
    return node;
  }
  if (isScalar(node) && (value === null || typeof value !== 'object')) {
    if (node.value !== value) {
      // A quoted string turned number (or the reverse) must lose its old quoting to keep its type.
      if (typeof node.value !== typeof value) node.type = undefined;
      node.value = value;
    }
    return node;
  }
  const fresh = doc.createNode(value as Plain) as Node;
  if (node && typeof node === 'object' && 'comment' in node) {
    const old = node as Scalar;
    (fresh as Scalar).commentBefore = old.commentBefore;
    (fresh as Scalar).comment = old.comment;
  }
  return fresh;
}

function keyOf(key: unknown): string {
  return isScalar(key) ? String(key.value) : String(key);
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}
