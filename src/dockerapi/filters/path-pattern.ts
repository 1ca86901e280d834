/**
 * A shell pattern as dockerd matches `docker images --filter reference=…` with (Go's path.Match): `*` is any
 * run of characters but `/`, `?` one character but `/`, `[abc]`, `[a-z]`, `[^a-z]` a class (which may hold
 * `/`), `\` takes the next character as it is, and the whole name must match. The pattern is read whole before
 * it is matched, so a malformed one is refused at once, as Go refuses it wherever in the pattern it stands.
 */

type Token = { kind: 'star' } | { kind: 'one' } | { kind: 'literal'; char: string } | { kind: 'class'; negated: boolean; ranges: Array<[number, number]> };

/** Go's ErrBadPattern, in its words. */
export class PatternSyntaxError extends Error {
  constructor() {
    super('syntax error in pattern');
  }
}

/** `pattern` as a matcher of whole names; throws PatternSyntaxError when it is malformed. */
export function pathPattern(pattern: string): (name: string) => boolean {
  const tokens = tokenize([...pattern]);
  return (name) => matchesAll(tokens, [...name]);
}

function tokenize(chars: string[]): Token[] {
  const tokens: Token[] = [];
  let at = 0;
  while (at < chars.length) {
    const c = chars[at++];
    if (c === '*') tokens.push({ kind: 'star' });
    else if (c === '?') tokens.push({ kind: 'one' });
    else if (c === '[') {
      const [token, next] = readClass(chars, at);
      tokens.push(token);
      at = next;
    } else if (c === '\\') {
      if (at >= chars.length) throw new PatternSyntaxError();
      tokens.push({ kind: 'literal', char: chars[at++] });
    } else tokens.push({ kind: 'literal', char: c });
  }
  return tokens;
}

/** A class from just after its `[` to its `]`: it holds at least one character or range. */
function readClass(chars: string[], from: number): [Token, number] {
  let at = from;
  const negated = chars[at] === '^';
  if (negated) at++;
  const ranges: Array<[number, number]> = [];
  while (!(chars[at] === ']' && ranges.length > 0)) {
    const [lo, afterLo] = classChar(chars, at);
    let hi = lo;
    at = afterLo;
    if (chars[at] === '-') [hi, at] = classChar(chars, at + 1);
    ranges.push([lo, hi]);
  }
  return [{ kind: 'class', negated, ranges }, at + 1];
}

/**
 * One character of a class (its code point), perhaps escaped, and where the class goes on. An unescaped `-`
 * or `]` cannot stand there, and a class that ends with the pattern was never closed.
 */
function classChar(chars: string[], from: number): [number, number] {
  let at = from;
  let c = chars[at];
  if (c === undefined || c === '-' || c === ']') throw new PatternSyntaxError();
  if (c === '\\') c = chars[++at];
  if (c === undefined || at + 1 >= chars.length) throw new PatternSyntaxError();
  return [c.codePointAt(0) ?? 0, at + 1];
}

function fits(token: Exclude<Token, { kind: 'star' }>, c: string): boolean {
  if (token.kind === 'one') return c !== '/';
  if (token.kind === 'literal') return c === token.char;
  const cp = c.codePointAt(0) ?? 0;
  return token.ranges.some(([lo, hi]) => lo <= cp && cp <= hi) !== token.negated;
}

/**
 * Whether the tokens match all of `name`: the set of positions the tokens so far can end at, carried along
 * the tokens (time linear in the name for each token, whatever the stars).
 */
function matchesAll(tokens: Token[], name: string[]): boolean {
  let reached = name.map(() => false).concat(false);
  reached[0] = true;
  for (const token of tokens) {
    const next = name.map(() => false).concat(false);
    if (token.kind === 'star') {
      for (let i = 0; i <= name.length; i++) next[i] = reached[i] || (i > 0 && next[i - 1] && name[i - 1] !== '/');
    } else {
      for (let i = 0; i < name.length; i++) if (reached[i] && fits(token, name[i])) next[i + 1] = true;
    }
    reached = next;
  }
  return reached[name.length];
}
