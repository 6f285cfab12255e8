import { readFileSync } from 'node:fs';
import type { z } from 'zod';

/** One group of settings: a config schema and the source file whose TSDoc table describes it. */
export interface ConfigGroup {
  readonly title: string;
  readonly file: string;
  readonly schema: z.ZodObject;
}

/** The raw default of a schema field (unwrapping pipes), `undefined` when it has none. */
export function defaultOf(field: z.ZodType): unknown {
  let current: unknown = field;
  for (let depth = 0; depth < 8; depth++) {
    const def = (current as { def?: { type?: string; defaultValue?: unknown; in?: unknown; innerType?: unknown } }).def;
    if (def === undefined) return undefined;
    if (def.type === 'default') return def.defaultValue;
    if (def.type === 'optional') return undefined;
    current = def.in ?? def.innerType;
  }
  return undefined;
}

/**
 * The meaning of each variable, read from the TSDoc table in the config's
 * source (`| \`NAME\` | meaning | … |`; a row may name several variables).
 */
export function meaningsOf(file: string): Map<string, string> {
  const meanings = new Map<string, string>();
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const row = /^\s*\*\s*\|(.*)\|\s*$/.exec(line)?.[1];
    if (row === undefined) continue;
    const cells = row.split(/(?<!\\)\|/).map((c) => c.trim());
    const names = [...(cells[0] ?? '').matchAll(/`([A-Z][A-Z0-9_]*)`/g)].map((m) => m[1] ?? '');
    const meaning = cells[1];
    if (names.length === 0 || meaning === undefined) continue;
    for (const name of names) meanings.set(name, meaning);
  }
  return meanings;
}

function formatDefault(value: unknown): string {
  if (value === undefined) return '—';
  if (value === '') return '(empty)';
  return `\`${typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' ? String(value) : JSON.stringify(value)}\``;
}

/** The Markdown of every group: a `### title` and a `| Variable | Default | Meaning |` table. */
export function renderConfigTables(groups: readonly ConfigGroup[]): { markdown: string; undocumented: string[] } {
  const undocumented: string[] = [];
  const parts = groups.map((group) => {
    const meanings = meaningsOf(group.file);
    const rows = Object.entries(group.schema.shape).map(([name, field]) => {
      const meaning = meanings.get(name);
      if (meaning === undefined) undocumented.push(`${group.title}: ${name}`);
      return `| \`${name}\` | ${formatDefault(defaultOf(field as z.ZodType))} | ${meaning ?? ''} |`;
    });
    return [`### ${group.title}`, '', '| Variable | Default | Meaning |', '| --- | --- | --- |', ...rows].join('\n');
  });
  return { markdown: parts.join('\n\n'), undocumented };
}
