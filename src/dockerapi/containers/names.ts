/** Names docker gives containers created without one: `<adjective>_<noun>_<id prefix>`. */

const ADJECTIVES = ['brave', 'calm', 'eager', 'keen', 'quiet', 'swift', 'bold', 'fond'];
const NOUNS = ['turing', 'hopper', 'lovelace', 'curie', 'noether', 'ritchie', 'knuth', 'liskov'];

export function generatedName(id: string): string {
  // Unsigned shifts: ids from 80000000 up are past 2^31, where `>>` turns negative and `% 8` indexes nothing.
  const n = parseInt(id.slice(0, 8), 16);
  return `${ADJECTIVES[n % 8]}_${NOUNS[(n >>> 3) % 8]}_${id.slice(0, 6)}`;
}
