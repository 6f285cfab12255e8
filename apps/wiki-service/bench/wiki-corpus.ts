import type { Pool } from '@dagu-mcp/runtime';
import { readPageFacts } from '../src/pages/frontmatter';
import { nameKeyOf, typeKeyOf } from '../src/pages/page-keys';
import { searchTextSql } from '../src/pages/page.records';

/**
 * A synthetic wiki for the benchmark: `pages` pages of about `bytes` bytes
 * of Markdown across `workspaces` workspaces, deterministic for a seed.
 *
 * Words follow a Zipf-like law over a 5,000-word vocabulary, so the trigram
 * index sees realistic text. Marker words with known frequencies make the
 * search cases comparable between runs:
 * - {@link RARE} in 10 pages, {@link MEDIUM} in 1 % of pages, {@link COMMON} in
 *   half of them; {@link TITLE_WORD} only in the frontmatter title of 2 %.
 */

export const RARE = 'zeppelin';
export const MEDIUM = 'kubernetes';
export const COMMON = 'deployment';
export const TITLE_WORD = 'postmortem';

/** mulberry32: a small, fast, seedable PRNG returning floats in [0, 1). */
export function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const SYLLABLES = [
  'ka',
  'lo',
  'mi',
  'ne',
  'ru',
  'sa',
  'to',
  'vi',
  'ze',
  'bra',
  'cle',
  'dro',
  'fen',
  'gul',
  'hax',
  'jor',
  'pli',
  'qua',
  'ster',
  'wen',
];

/** The vocabulary: 5,000 distinct pseudo-words of two or three syllables. */
function vocabulary(random: () => number): string[] {
  const words = new Set<string>();
  while (words.size < 5000) {
    const count = 2 + Math.floor(random() * 2);
    let word = '';
    for (let i = 0; i < count; i += 1) word += SYLLABLES[Math.floor(random() * SYLLABLES.length)] ?? 'x';
    words.add(word);
  }
  return [...words];
}

/** One generated page. */
export interface CorpusPage {
  workspace: string;
  path: string;
  content: string;
}

/** Generates the corpus (not yet stored). */
export function generateCorpus(opts: { pages: number; workspaces: number; bytes: number; seed: number }): CorpusPage[] {
  const random = prng(opts.seed);
  const words = vocabulary(random);
  const word = (): string => words[Math.floor(words.length ** random()) - 1] ?? 'lorem';
  const pages: CorpusPage[] = [];
  for (let i = 0; i < opts.pages; i += 1) {
    const workspace = `ws${String(i % opts.workspaces).padStart(2, '0')}`;
    const n = Math.floor(i / opts.workspaces);
    const path = `area-${n % 5}/topic_${Math.floor(n / 5) % 20}/page-${n}`;
    const markers = [i % 1000 < 1 ? RARE : '', i % 100 === 7 ? MEDIUM : '', i % 2 === 0 ? COMMON : ''].filter(
      (m) => m !== '',
    );
    const lines: string[] = [];
    if (i % 50 === 3)
      lines.push('---', `title: ${TITLE_WORD} of ${word()} ${word()}`, `tags: [${word()}, ${word()}]`, '---');
    lines.push(`# ${word()} ${word()} ${word()}`);
    let size = lines.join('\n').length;
    while (size < opts.bytes) {
      const line = Array.from({ length: 8 + Math.floor(random() * 7) }, word);
      const marker = markers.shift();
      if (marker !== undefined) line.splice(Math.floor(random() * line.length), 0, marker);
      const text = line.join(' ');
      lines.push(text);
      size += text.length + 1;
    }
    pages.push({ workspace, path, content: `${lines.join('\n')}\n` });
  }
  return pages;
}

/**
 * Stores the corpus with multi-row INSERTs (500 pages each), deriving the
 * same columns a `wiki.put` writes, then ANALYZEs the table.
 */
export async function storeCorpus(pool: Pool, pages: readonly CorpusPage[]): Promise<void> {
  const workspaces = [...new Set(pages.map((p) => p.workspace))];
  await pool.query('INSERT INTO workspaces (name) SELECT unnest($1::text[]) ON CONFLICT DO NOTHING', [workspaces]);
  for (let start = 0; start < pages.length; start += 500) {
    const batch = pages.slice(start, start + 500);
    const values: unknown[] = [];
    const rows = batch.map((page, index) => {
      const facts = readPageFacts(page.path, page.content);
      const at = new Date(Date.UTC(2026, 0, 1) + (start + index) * 1000);
      values.push(
        page.workspace,
        page.path,
        nameKeyOf(page.path),
        typeKeyOf(page.path),
        page.content,
        facts.title,
        facts.tags,
        Buffer.byteLength(page.content),
        at,
        'bench',
      );
      const base = values.length - 10;
      const params = Array.from({ length: 10 }, (_, k) => `$${base + k + 1}`);
      return `(${params.join(', ')}, ${searchTextSql(params[5] ?? '', params[4] ?? '')})`;
    });
    await pool.query(
      `INSERT INTO pages (workspace, path, name_key, type_key, content, title, tags, size, updated_at, updated_by, search_text) VALUES ${rows.join(', ')}`,
      values,
    );
  }
  // As autovacuum would: statistics, and the visibility map that index-only scans rely on.
  await pool.query('VACUUM ANALYZE pages');
}
