import { resolveReference, type InterpolationScope } from './interpolate';

/**
 * Runtime values in shell text (dagu-model §3 "Values never become shell
 * code"): where Dagu pastes a value into the command, this engine puts an
 * expansion of an environment variable that holds it, and the value into the
 * step's environment under that generated name (`DAGU_V_1`, `DAGU_V_2`, …;
 * `DAGU_*` names are the engine's, so no param or output can take them). The
 * shell expands the variable without reading the value as code: `$(…)`,
 * backticks, `;`, `|` and quotes inside a value stay characters.
 *
 * What Dagu users rely on still holds, because the expansion sits where the
 * author wrote the reference:
 * - unquoted (`echo ${params.X}`): `${DAGU_V_1}`, split into words by the shell
 *   as the pasted text was;
 * - inside the author's double quotes (`"${params.X}"`): one word;
 * - inside the author's single quotes (`'${params.X}'`), where a shell expands
 *   nothing: the quote is closed around a double-quoted expansion
 *   (`'…'"${DAGU_V_1}"'…'`), so the value is still one literal word.
 *
 * Only references the engine resolves (`${params.X}`, `${env.X}`, step
 * outputs, `${foreach.item}`, output variables, `${context.…}`) are rewritten;
 * `$NAME` and unknown `${NAME}` are the shell's, as before. A `\` outside
 * single quotes keeps the next character literal, as the shell does.
 */
export interface ShellText {
  /** The command text, with every resolved reference an expansion. */
  readonly text: string;
  /** Generated variable → value, to add to the process environment. */
  readonly vars: Readonly<Record<string, string>>;
}

/** Prefix of the generated variables. */
export const VALUE_VARIABLE_PREFIX = 'DAGU_V_';

const BRACED = /^\$\{([^{}\s]+)\}/;

/** One pending here-document: its delimiter, `<<-` (leading tabs stripped) and whether it was quoted (no expansion). */
interface Heredoc {
  readonly delimiter: string;
  readonly stripTabs: boolean;
  readonly quoted: boolean;
}

const HEREDOC = /^<<(-?)[ \t]*(?:'([^'\n]+)'|"([^"\n]+)"|\\?([A-Za-z0-9_.-]+))/;

/**
 * Rewrites the references of `text` for a POSIX shell (see the module
 * comment). The scanner follows single and double quotes, `\` escapes,
 * comments (copied as written) and here-documents (an unquoted one expands
 * like double quotes; in a quoted one the shell expands nothing, so a
 * reference there stays as written, never the value).
 */
export function interpolateForShell(text: string, scope: InterpolationScope): ShellText {
  if (!text.includes('$')) return { text, vars: {} };
  const vars: Record<string, string> = {};
  const byExpression = new Map<string, string>();
  /** The generated variable of a reference, allocated on first use; undefined when the engine does not resolve it. */
  const nameFor = (expression: string): string | undefined => {
    let name = byExpression.get(expression);
    if (name === undefined) {
      const value = resolveReference(expression, scope, 'shell');
      if (value === undefined) return undefined;
      name = `${VALUE_VARIABLE_PREFIX}${byExpression.size + 1}`;
      byExpression.set(expression, name);
      vars[name] = value;
    }
    return name;
  };
  /** The expansion of a reference at `at`, and its length; undefined when the engine does not resolve it. */
  const expansionAt = (at: number): { name: string; length: number } | undefined => {
    const match = BRACED.exec(text.slice(at));
    const expression = match?.[1];
    const name = expression === undefined ? undefined : nameFor(expression);
    return match === null || name === undefined ? undefined : { name, length: match[0].length };
  };
  let out = '';
  let quote: 'none' | 'single' | 'double' = 'none';
  let heredocs: Heredoc[] = [];
  let i = 0;
  while (i < text.length) {
    const ch = text.charAt(i);
    if (ch === '\\' && quote !== 'single' && i + 1 < text.length) {
      out += text.slice(i, i + 2);
      i += 2;
      continue;
    }
    if (ch === '$' && text.charAt(i + 1) === '{') {
      const found = expansionAt(i);
      if (found !== undefined) {
        out += quote === 'single' ? `'"\${${found.name}}"'` : `\${${found.name}}`;
        i += found.length;
        continue;
      }
    }
    if (quote === 'none') {
      if (ch === '#' && (i === 0 || /[\s;&|(]/.test(text.charAt(i - 1)))) {
        const end = text.indexOf('\n', i);
        const stop = end < 0 ? text.length : end;
        out += text.slice(i, stop);
        i = stop;
        continue;
      }
      const heredoc =
        ch === '<' && text.charAt(i + 1) === '<' && text.charAt(i + 2) !== '<' ? HEREDOC.exec(text.slice(i)) : null;
      if (heredoc !== null) {
        const delimiter = heredoc[2] ?? heredoc[3] ?? heredoc[4] ?? '';
        const quoted = heredoc[2] !== undefined || heredoc[3] !== undefined || heredoc[0].includes('\\');
        heredocs.push({ delimiter, stripTabs: heredoc[1] === '-', quoted });
        out += heredoc[0];
        i += heredoc[0].length;
        continue;
      }
      if (ch === '\n' && heredocs.length > 0) {
        out += ch;
        i += 1;
        for (const doc of heredocs) i = copyHeredocBody(doc, i);
        heredocs = [];
        continue;
      }
    }
    if (ch === "'" && quote !== 'double') quote = quote === 'single' ? 'none' : 'single';
    else if (ch === '"' && quote !== 'single') quote = quote === 'double' ? 'none' : 'double';
    out += ch;
    i += 1;
  }
  return { text: out, vars };

  /** Copies a here-document body from `from` through its delimiter line; returns the index after it. */
  function copyHeredocBody(doc: Heredoc, from: number): number {
    let at = from;
    while (at < text.length) {
      const end = text.indexOf('\n', at);
      const stop = end < 0 ? text.length : end;
      const line = text.slice(at, stop);
      if ((doc.stripTabs ? line.replace(/^\t+/, '') : line) === doc.delimiter) {
        out += text.slice(at, Math.min(stop + 1, text.length));
        return Math.min(stop + 1, text.length);
      }
      out += doc.quoted ? line : expandLine(line);
      if (end >= 0) out += '\n';
      at = stop + 1;
    }
    return text.length;
  }

  /** A line of an unquoted here-document: references become expansions, quotes are plain characters. */
  function expandLine(line: string): string {
    return line.replace(/\$\{([^{}\s]+)\}/g, (whole: string, expression: string) => {
      const name = nameFor(expression);
      return name === undefined ? whole : `\${${name}}`;
    });
  }
}

/** Shells that expand `${NAME}` as POSIX sh does (by file name, without directory). */
const POSIX_SHELLS: ReadonlySet<string> = new Set(['sh', 'bash', 'dash', 'zsh', 'ksh', 'mksh', 'ash', 'busybox']);

/**
 * True when the command `argv` (`['/bin/sh']`, `['bash', '-e']`,
 * `['/usr/bin/env', 'bash']`) runs a POSIX shell, so values can go in as
 * expansions. `env` and its options are looked through.
 */
export function isPosixShell(argv: readonly string[]): boolean {
  const baseName = (file: string): string => file.slice(file.lastIndexOf('/') + 1);
  let at = 0;
  if (baseName(argv[0] ?? '') === 'env') {
    at = 1;
    while (at < argv.length && ((argv[at] ?? '').startsWith('-') || (argv[at] ?? '').includes('='))) at += 1;
  }
  return POSIX_SHELLS.has(baseName(argv[at] ?? ''));
}
