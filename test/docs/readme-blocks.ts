/**
 * The fenced code blocks of a Markdown document, for the docs tests: the README's commands
 * and JSON snippets are checked, and run, rather than trusted.
 */

/** One fenced block: its info string (`sh`, `json`, …), its text, and the `## ` section it sits in. */
export interface CodeBlock {
  readonly lang: string;
  readonly text: string;
  readonly section: string;
}

/** Every fenced (```) block of `markdown`, in order. */
export function codeBlocks(markdown: string): CodeBlock[] {
  const blocks: CodeBlock[] = [];
  let section = '';
  let open: { lang: string; lines: string[] } | undefined;
  for (const line of markdown.split('\n')) {
    if (open !== undefined) {
      if (line.trimStart().startsWith('```')) {
        blocks.push({ lang: open.lang, text: open.lines.join('\n'), section });
        open = undefined;
      } else open.lines.push(line);
      continue;
    }
    if (line.startsWith('## ')) section = line.slice(3).trim();
    else if (line.trimStart().startsWith('```')) open = { lang: line.trim().slice(3).trim(), lines: [] };
  }
  return blocks;
}
