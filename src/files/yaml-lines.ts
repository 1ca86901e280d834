// A YAML text parsed with its line numbers, for error sentences that say where a problem is (`(line 7)`):
// berth's task configs, plan files, Role files and its targets file all name lines the same way.
import { LineCounter, parseDocument, type Document, type DocumentOptions, type Node, type ParseOptions, type SchemaOptions } from 'yaml';

export interface LinedDocument {
  doc: Document.Parsed;
  /** the 1-based line and column of an offset in the text */
  pos(offset: number): { line: number; col: number };
  /** ` (line N)` of a node; '' when it has no place in the text (a default) */
  at(node: Node | null | undefined): string;
}

export function parseLined(text: string, options: ParseOptions & DocumentOptions & SchemaOptions = {}): LinedDocument {
  const lines = new LineCounter();
  const doc = parseDocument(text, { ...options, lineCounter: lines });
  return {
    doc,
    pos: (offset) => lines.linePos(offset),
    at: (node) => (node?.range ? ` (line ${lines.linePos(node.range[0]).line})` : ''),
  };
}
