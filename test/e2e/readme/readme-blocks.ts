// The runnable blocks of a Markdown file (README.md, docs/*.md): a fenced `sh` block right after an HTML comment
// `<!-- readme-test: NAME -->` (invisible on GitHub), split into the commands a user would type, one per line
// (`\` continues a line; blank and comment-only lines are not commands).
export interface ReadmeCommand {
  /** `FILE:LINE` (1-based) where the command starts */
  where: string;
  block: string;
  text: string;
  /** from a trailing `# prints TEXT` comment: what the command's output must contain */
  expect?: string;
}

export interface ReadmeBlock {
  name: string;
  commands: ReadmeCommand[];
}

const MARKER = /^<!--\s*readme-test:\s*([\w-]+)\s*-->\s*$/;
const PRINTS = /\s#\s*prints\s+(.+)$/;

export function readmeBlocks(markdown: string, file = 'README.md'): ReadmeBlock[] {
  const lines = markdown.split('\n');
  const blocks: ReadmeBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const marker = MARKER.exec(lines[i]);
    if (!marker) continue;
    let open = i + 1;
    while (open < lines.length && lines[open].trim() === '') open++;
    if (lines[open]?.trim() !== '```sh') throw new Error(`${file}:${i + 1}: readme-test marker "${marker[1]}" is not followed by a \`\`\`sh block`);
    const commands: ReadmeCommand[] = [];
    let j = open + 1;
    for (; j < lines.length && lines[j].trim() !== '```'; j++) {
      const start = j;
      let text = lines[j];
      while (text.endsWith('\\') && j + 1 < lines.length) text = `${text.slice(0, -1)}${lines[++j]}`;
      if (text.trim() === '' || text.trim().startsWith('#')) continue;
      const expect = PRINTS.exec(text)?.[1].trim();
      commands.push({ where: `${file}:${start + 1}`, block: marker[1], text, ...(expect ? { expect } : {}) });
    }
    if (j === lines.length) throw new Error(`${file}:${open + 1}: the block "${marker[1]}" is never closed`);
    blocks.push({ name: marker[1], commands });
    i = j;
  }
  return blocks;
}
