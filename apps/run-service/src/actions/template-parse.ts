/**
 * A parser for the Go `text/template` subset `template.render` keeps
 * (dagu-actions §1.7): text, `{{ }}` actions with `{{-` / `-}}` trimming,
 * comments, pipelines with `|`, function calls, fields (`.a.b`, `$x.a`),
 * variables (`$x :=` / `=`), literals (strings, raw strings, numbers,
 * `true`, `false`, `nil`), parenthesised pipelines, and `if` / `else if` /
 * `else` / `range` (with `$i, $v :=`) / `with` / `end`. Errors read
 * `template: parse error: render:<line>: <detail>`; an unknown function is
 * `function "<name>" not defined` (a parse error, as in Go).
 */

/** One operand of a command. */
export type Operand =
  | { kind: 'field'; base: 'dot' | { variable: string } | { pipe: Pipeline }; path: string[] }
  | { kind: 'literal'; value: unknown }
  | { kind: 'function'; name: string };

/** Operands of one command: a function and its arguments, or one operand. */
export interface Command {
  readonly args: Operand[];
}

/** `$a, $b := cmd | cmd`. */
export interface Pipeline {
  readonly decl: string[];
  /** `=` assigns an existing variable instead of declaring one. */
  readonly assign: boolean;
  readonly commands: Command[];
  readonly line: number;
  readonly source: string;
}

/** A node of the parsed template. */
export type Node =
  | { kind: 'text'; text: string }
  | { kind: 'action'; pipe: Pipeline }
  | { kind: 'if' | 'with' | 'range'; pipe: Pipeline; body: Node[]; otherwise: Node[] };

/** A template that failed to parse. */
export class TemplateParseError extends Error {}

interface Action {
  readonly source: string;
  readonly line: number;
}

/** Splits `text` into text and action parts, applying trim markers and dropping comments. */
function split(text: string): Array<string | Action> {
  const parts: Array<string | Action> = [];
  let pos = 0;
  let trimNext = false;
  while (pos <= text.length) {
    const open = text.indexOf('{{', pos);
    let chunk = open < 0 ? text.slice(pos) : text.slice(pos, open);
    if (trimNext) chunk = chunk.replace(/^\s+/, '');
    if (open < 0) {
      if (chunk !== '') parts.push(chunk);
      break;
    }
    const line = text.slice(0, open).split('\n').length;
    const close = findClose(text, open + 2, line);
    let inner = text.slice(open + 2, close);
    if (/^-\s/.test(inner)) {
      chunk = chunk.replace(/\s+$/, '');
      inner = inner.slice(1);
    }
    trimNext = /\s-$/.test(inner);
    if (trimNext) inner = inner.slice(0, -1);
    if (chunk !== '') parts.push(chunk);
    const source = inner.trim();
    if (!(source.startsWith('/*') && source.endsWith('*/'))) parts.push({ source, line });
    pos = close + 2;
  }
  return parts;
}

/** The index of the `}}` closing the action opened before `from`, skipping quoted text. */
function findClose(text: string, from: number, line: number): number {
  let quote: string | undefined;
  for (let i = from; i < text.length - 1; i += 1) {
    const c = text[i];
    if (quote !== undefined) {
      if (c === '\\' && quote === '"') i += 1;
      else if (c === quote) quote = undefined;
    } else if (c === '"' || c === '`' || c === "'") quote = c;
    else if (c === '}' && text[i + 1] === '}') return i;
  }
  throw new TemplateParseError(`template: parse error: render:${line}: unclosed action`);
}

const TOKEN =
  /\s*(?:("(?:[^"\\]|\\.)*")|(`[^`]*`)|('(?:[^'\\]|\\.)')|(-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)|(:=|=|\||\(|\)|,)|(\$[A-Za-z0-9_]*(?:\.[A-Za-z0-9_]+)*)|(\.(?:[A-Za-z0-9_]+(?:\.[A-Za-z0-9_]+)*)?)|([A-Za-z_][A-Za-z0-9_]*))/y;

function tokenize(source: string, line: number): string[] {
  const tokens: string[] = [];
  TOKEN.lastIndex = 0;
  let pos = 0;
  while (pos < source.length) {
    if (/^\s*$/.test(source.slice(pos))) break;
    TOKEN.lastIndex = pos;
    const match = TOKEN.exec(source);
    if (match === null) {
      const bad = source.slice(pos).trim()[0] ?? '';
      throw new TemplateParseError(`template: parse error: render:${line}: unexpected "${bad}" in command`);
    }
    const token = match.slice(1).find((t) => t !== undefined) ?? '';
    // A field right after `)` continues the parenthesised value: `(pipeline).a`.
    const glued = token.startsWith('.') && token !== '.' && !/\s/.test(source[pos] ?? '');
    if (glued && tokens[tokens.length - 1] === ')') tokens[tokens.length - 1] = `)${token}`;
    else tokens.push(token);
    pos = TOKEN.lastIndex;
  }
  return tokens;
}

class PipeParser {
  private i = 0;
  constructor(
    private readonly tokens: string[],
    private readonly line: number,
    private readonly source: string,
    private readonly known: (name: string) => boolean,
  ) {}

  private fail(detail: string): never {
    throw new TemplateParseError(`template: parse error: render:${this.line}: ${detail}`);
  }

  pipeline(allowDecl: boolean): Pipeline {
    const decl: string[] = [];
    let assign = false;
    if (allowDecl) {
      let j = this.i;
      const names: string[] = [];
      while (/^\$[A-Za-z0-9_]*$/.test(this.tokens[j] ?? '')) {
        names.push(this.tokens[j] ?? '');
        if (this.tokens[j + 1] === ',') j += 2;
        else {
          j += 1;
          break;
        }
      }
      const op = this.tokens[j];
      if (names.length > 0 && (op === ':=' || op === '=')) {
        decl.push(...names);
        assign = op === '=';
        this.i = j + 1;
      }
    }
    const commands: Command[] = [this.command()];
    while (this.tokens[this.i] === '|') {
      this.i += 1;
      commands.push(this.command());
    }
    return { decl, assign, commands, line: this.line, source: this.source };
  }

  done(): void {
    if (this.i < this.tokens.length) this.fail(`unexpected "${this.tokens[this.i] ?? ''}" in operand`);
  }

  private command(): Command {
    const args: Operand[] = [];
    for (;;) {
      const token = this.tokens[this.i];
      if (token === undefined || token === '|' || token === ')' || token.startsWith(').')) break;
      args.push(this.operand());
    }
    if (args.length === 0) this.fail('missing value for command');
    return { args };
  }

  private operand(): Operand {
    const token = this.tokens[this.i] ?? '';
    this.i += 1;
    if (token === '(') {
      const pipe = this.pipeline(false);
      const close = this.tokens[this.i] ?? '';
      if (close !== ')' && !close.startsWith(').')) this.fail('unclosed left paren');
      this.i += 1;
      const path = close.startsWith(').') ? close.slice(2).split('.') : [];
      return { kind: 'field', base: { pipe }, path };
    }
    if (token === '.') return { kind: 'field', base: 'dot', path: [] };
    if (token.startsWith('.')) return { kind: 'field', base: 'dot', path: token.slice(1).split('.') };
    if (token.startsWith('$')) {
      const [variable = '$', ...path] = token.split('.');
      return { kind: 'field', base: { variable }, path };
    }
    if (token.startsWith('"')) return { kind: 'literal', value: String(JSON.parse(token)) };
    if (token.startsWith('`')) return { kind: 'literal', value: token.slice(1, -1) };
    if (token.startsWith("'"))
      return { kind: 'literal', value: String(JSON.parse(`"${token.slice(1, -1)}"`)).charCodeAt(0) };
    if (/^-?\d/.test(token)) return { kind: 'literal', value: Number(token) };
    if (token === 'true' || token === 'false') return { kind: 'literal', value: token === 'true' };
    if (token === 'nil') return { kind: 'literal', value: null };
    if (/^[A-Za-z_]/.test(token)) {
      if (!this.known(token)) this.fail(`function "${token}" not defined`);
      return { kind: 'function', name: token };
    }
    this.fail(`unexpected "${token}" in operand`);
  }
}

function parsePipe(action: Action, text: string, allowDecl: boolean, known: (n: string) => boolean): Pipeline {
  const parser = new PipeParser(tokenize(text, action.line), action.line, action.source, known);
  const pipe = parser.pipeline(allowDecl);
  parser.done();
  return pipe;
}

/**
 * Parses `text`. `known` tells whether a function name is defined.
 *
 * @throws TemplateParseError `template: parse error: render:<line>: …`
 */
export function parseTemplate(text: string, known: (name: string) => boolean): Node[] {
  const parts = split(text);
  let i = 0;
  const fail = (line: number, detail: string): never => {
    throw new TemplateParseError(`template: parse error: render:${line}: ${detail}`);
  };
  // Parses nodes until `end` / `else` (returned as the stop word) or the end of the text.
  const list = (depth: number): { nodes: Node[]; stop?: { word: string; action: Action } } => {
    const nodes: Node[] = [];
    while (i < parts.length) {
      const part = parts[i] ?? '';
      i += 1;
      if (typeof part === 'string') {
        nodes.push({ kind: 'text', text: part });
        continue;
      }
      const word = /^[a-z]+/.exec(part.source)?.[0] ?? '';
      const rest = part.source.slice(word.length);
      if (word === 'end' || word === 'else') {
        if (depth === 0) fail(part.line, `unexpected {{${word}}}`);
        return { nodes, stop: { word, action: part } };
      }
      if (word === 'if' || word === 'with' || word === 'range') {
        nodes.push(block(word, part, rest, depth));
        continue;
      }
      if (part.source === '') fail(part.line, 'missing value for command');
      nodes.push({ kind: 'action', pipe: parsePipe(part, part.source, true, known) });
    }
    if (depth > 0) fail(parts.length, 'unexpected EOF');
    return { nodes };
  };
  const block = (word: 'if' | 'with' | 'range', action: Action, rest: string, depth: number): Node => {
    if (rest.trim() === '') fail(action.line, `missing value for ${word}`);
    const pipe = parsePipe(action, rest, true, known);
    const body = list(depth + 1);
    let otherwise: Node[] = [];
    if (body.stop?.word === 'else') {
      const elseRest = body.stop.action.source.slice(4).trim();
      const chained = /^(if|with)\b/.exec(elseRest)?.[1];
      if (chained === 'if' || chained === 'with') {
        // `else if x` = `else` + `if x … end` sharing this block's `end`.
        otherwise = [block(chained, body.stop.action, elseRest.slice(chained.length), depth)];
        return { kind: word, pipe, body: body.nodes, otherwise };
      }
      const tail = list(depth + 1);
      if (tail.stop?.word !== 'end') fail(action.line, `expected end; found ${tail.stop?.word ?? 'EOF'}`);
      otherwise = tail.nodes;
    }
    return { kind: word, pipe, body: body.nodes, otherwise };
  };
  return list(0).nodes;
}
