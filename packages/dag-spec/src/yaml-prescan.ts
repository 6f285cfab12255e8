/**
 * Bounds on an author's YAML text checked before the `yaml` library parses it (docs/security.md "Bounds on authors' text"): its size, how deep its collections
 * nest and a lower estimate of how many values it holds.
 *
 * The `yaml` library builds its whole syntax tree before any bound on that tree can be
 * measured, and its cost grows with nesting: `steps: [[[…]]]` two hundred thousand levels
 * deep took seconds and a gigabyte. This scan reads the text once, character by
 * character, keeps no more than a stack of indentation columns, and stops at the first
 * bound passed, so refusing an attack costs about as much as reading up to its 65th
 * bracket.
 *
 * Where text is a string and where it is structure follows the `yaml` library's own lexer
 * (yaml 2.x `parse/lexer.js`: its quoted, block and plain scalar rules, its `indentNext`
 * that ends a multi-line scalar or flow collection at a less indented line, its comment
 * and document-marker rules), so a bracket inside a string or a comment is never counted
 * and a bracket the parser sees as structure always is; `yaml-prescan.test.ts` compares
 * the two on random text.
 */

/** The bounds of one YAML stream (every document of it together). */
export interface YamlTextBounds {
  /** Most bytes of UTF-8 text. */
  readonly maxBytes: number;
  /** Most levels of nested collections (block mappings and sequences, and flow `[` / `{`). */
  readonly maxDepth: number;
  /** Most values counted by the scan (a lower estimate of the syntax tree's nodes, aliases not expanded). */
  readonly maxNodes: number;
}

/**
 * Default bounds: 4 MiB (the gateway's default `BODY_LIMIT_BYTES`), 64 levels (a DAG
 * nests a handful: steps, a step, its foreach, its items), 200 000 values (the
 * expansion bound of `yaml-bounds.ts`, which the scan's lower estimate never passes for
 * a document that bound accepts).
 */
export const DEFAULT_YAML_TEXT_BOUNDS: YamlTextBounds = { maxBytes: 4 * 1024 * 1024, maxDepth: 64, maxNodes: 200_000 };

/** A bound the text passes: which, a readable message, and where (1-based line and column). */
export interface YamlTextProblem {
  readonly bound: 'bytes' | 'depth' | 'nodes';
  /** e.g. `collections nest deeper than 64 levels at line 1, column 72 (the nesting depth is bounded)`. */
  readonly message: string;
  readonly line: number;
  readonly column: number;
}

const SPACE = 32;
const TAB = 9;
const LF = 10;
const CR = 13;
const HASH = 35;
const COLON = 58;
const DASH = 45;
const DOT = 46;
const QUESTION = 63;
const COMMA = 44;
const OPEN_SQUARE = 91;
const CLOSE_SQUARE = 93;
const OPEN_CURLY = 123;
const CLOSE_CURLY = 125;
const DQUOTE = 34;
const SQUOTE = 39;
const BACKSLASH = 92;
const BANG = 33;
const AMP = 38;
const STAR = 42;
const PIPE = 124;
const GT = 62;
const PERCENT = 37;
const LT = 60;
const BOM = 0xfeff;

const MAP = 0;
const SEQ = 1;

/** Space, tab, CR, LF or the end of the text (the lexer's `isEmpty`). */
function isEmpty(c: number): boolean {
  return c === SPACE || c === LF || c === CR || c === TAB || Number.isNaN(c);
}

function isFlowIndicator(c: number): boolean {
  return c === COMMA || c === OPEN_SQUARE || c === CLOSE_SQUARE || c === OPEN_CURLY || c === CLOSE_CURLY;
}

/** What ends an anchor or alias name (the lexer's `isNotAnchorChar`). */
function endsAnchor(c: number): boolean {
  return (
    Number.isNaN(c) ||
    c === SPACE ||
    c === COMMA ||
    c === OPEN_SQUARE ||
    c === CLOSE_SQUARE ||
    c === OPEN_CURLY ||
    c === CLOSE_CURLY ||
    c === LF ||
    c === CR ||
    c === TAB
  );
}

/** The characters of a tag (the lexer's `tagChars`), `%` escapes aside. */
function isTagChar(c: number): boolean {
  return (
    (c >= 48 && c <= 57) ||
    (c >= 65 && c <= 90) ||
    (c >= 97 && c <= 122) ||
    "-#;/?:@&=+$_.!~*'()".includes(String.fromCharCode(c))
  );
}

function isHex(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 65 && c <= 70) || (c >= 97 && c <= 102);
}

/** A bound passed: thrown inside the scan, caught by {@link prescanYaml}. */
class Refusal extends Error {
  constructor(
    readonly bound: YamlTextProblem['bound'],
    readonly offset: number,
  ) {
    super(`bound passed: ${bound}`);
  }
}

/** UTF-8 length of `text`, stopping once it passes `max`. */
function utf8LengthPast(text: string, max: number): boolean {
  if (text.length > max) return true;
  if (text.length * 3 <= max) return false;
  let bytes = 0;
  for (let i = 0; i < text.length; i += 1) {
    const c = text.charCodeAt(i);
    if (c < 0x80) bytes += 1;
    else if (c < 0x800) bytes += 2;
    else if (c >= 0xd800 && c <= 0xdbff) {
      bytes += 4;
      i += 1;
    } else bytes += 3;
    if (bytes > max) return true;
  }
  return false;
}

/**
 * The scan itself. Names follow the `yaml` lexer's where they mirror it (`indentNext`,
 * `indentValue`, `flowLevel`, `flowKey`, `continueScalar`).
 */
class Scanner {
  private pos = 0;
  /** Offset of the first character of the current line (for columns of the block stack). */
  private lineStart = 0;
  private flowLevel = 0;
  private flowKey = false;
  private indentNext = 0;
  private indentValue = 0;
  private nodes = 0;
  /** Columns and kinds of the open block collections, innermost last. */
  private readonly cols: number[] = [];
  private readonly kinds: number[] = [];
  /** Block collections opened on the current line so far. */
  private lineEntries = 0;
  /** Column where the current node (with its properties) began, or -1. */
  private nodeCol = -1;
  private keyOnLine = false;
  private deepest = 0;
  private deepestFlow = 0;
  /** A `-` or `?` item was counted and its node has not begun (a flow collection there is that item). */
  private itemPending = false;

  constructor(
    private readonly s: string,
    private readonly bounds: YamlTextBounds,
  ) {}

  private at(i: number): number {
    return this.s.charCodeAt(i);
  }

  run(): void {
    const s = this.s;
    if (this.at(0) === BOM) this.pos = 1;
    // The lexer's "stream" state: blank lines, comments and directives before a document.
    let inStream = true;
    while (this.pos < s.length) {
      if (inStream) {
        if (this.at(this.pos) === PERCENT || this.atLineEnd(this.pos)) {
          this.skipLine();
          continue;
        }
        // A document begins here (counted now unless its `---` marker counts it).
        if (!this.startsMarker(this.pos)) this.count(this.pos);
      }
      inStream = this.lineStartState();
    }
  }

  /** A `---` or `...` marker line at `i`. */
  private startsMarker(i: number): boolean {
    const c = this.at(i);
    return (c === DASH || c === DOT) && this.at(i + 1) === c && this.at(i + 2) === c && isEmpty(this.at(i + 3));
  }

  /** The lexer's `atLineEnd`: only spaces and tabs before a comment, a line break or the end. */
  private atLineEnd(i: number): boolean {
    let c = this.at(i);
    while (c === SPACE || c === TAB) c = this.at(++i);
    if (Number.isNaN(c) || c === HASH || c === LF) return true;
    return c === CR && this.at(i + 1) === LF;
  }

  /** Moves past the next line break (or to the end). */
  private skipLine(): void {
    const nl = this.s.indexOf('\n', this.pos);
    this.pos = nl === -1 ? this.s.length : nl + 1;
    this.lineStart = this.pos;
  }

  private newLineAt(offset: number): void {
    this.lineStart = offset;
  }

  /**
   * The lexer's `parseLineStart` then `parseBlockStart`, then the document state on that
   * line. @returns true when a `...` marker returns to the stream state.
   */
  private lineStartState(): boolean {
    const p = this.pos;
    const c = this.at(p);
    if (c === DASH || c === DOT) {
      if (this.at(p + 1) === c && this.at(p + 2) === c && isEmpty(this.at(p + 3))) {
        this.pos = p + 3;
        this.indentValue = 0;
        this.indentNext = 0;
        // A new document: its collections start afresh.
        this.cols.length = 0;
        this.kinds.length = 0;
        this.lineEntries = 0;
        this.nodeCol = -1;
        this.keyOnLine = false;
        // After `...` the lexer is back in its stream state, on the same line.
        if (c === DOT) return true;
        // Each document is a value of the stream (a stream of empty documents is no cheaper).
        this.count(p);
        this.documentState();
        return false;
      }
    }
    let i = p;
    while (this.at(i) === SPACE) i += 1;
    this.indentValue = i - p;
    this.pos = i;
    if (this.indentNext > this.indentValue && !isEmpty(this.at(i + 1))) this.indentNext = this.indentValue;
    if (!this.atLineEnd(i)) this.enterLine(i - this.lineStart);
    else {
      this.lineEntries = 0;
      this.nodeCol = -1;
      this.keyOnLine = false;
    }
    // Block-start indicators: `- `, `? `, `: ` at the start of a line, each nesting one level.
    for (;;) {
      const ch0 = this.at(this.pos);
      if ((ch0 === DASH || ch0 === QUESTION || ch0 === COLON) && isEmpty(this.at(this.pos + 1))) {
        this.addEntry(ch0 === DASH ? SEQ : MAP, this.pos - this.lineStart);
        if (ch0 !== COLON) this.count(this.pos);
        this.itemPending = ch0 !== COLON;
        let j = this.pos + 1;
        while (this.at(j) === SPACE || this.at(j) === TAB) j += 1;
        this.indentNext = this.indentValue + 1;
        this.indentValue += j - this.pos;
        this.pos = j;
        continue;
      }
      break;
    }
    this.documentState();
    return false;
  }

  /** Pops the block collections a line at column `col` closes. */
  private enterLine(col: number): void {
    let n = this.cols.length;
    while (n > 0 && (this.cols[n - 1] ?? 0) > col) n -= 1;
    this.cols.length = n;
    this.kinds.length = n;
    this.lineEntries = 0;
    this.nodeCol = -1;
    this.keyOnLine = false;
    this.itemPending = false;
  }

  /**
   * A block collection of `kind` at column `col`: the one already open there, or a new
   * level (a sequence at its mapping's column, `key:\n- item`, is a level of its own).
   */
  private addEntry(kind: number, col: number): void {
    const first = this.lineEntries === 0;
    this.lineEntries += 1;
    let n = this.cols.length;
    if (first && n > 0 && this.cols[n - 1] === col) {
      if (this.kinds[n - 1] === kind) return;
      if (kind === MAP) {
        // A key after an indentless sequence closes it.
        n -= 1;
        this.cols.length = n;
        this.kinds.length = n;
        if (n > 0 && this.cols[n - 1] === col && this.kinds[n - 1] === MAP) return;
      }
    } else if (n > 0 && (this.cols[n - 1] ?? -1) >= col) return;
    this.cols.push(col);
    this.kinds.push(kind);
    this.checkDepth(this.lineStart + col);
  }

  private checkDepth(offset: number): void {
    const depth = this.cols.length + this.flowLevel;
    if (depth > this.deepest) this.deepest = depth;
    if (this.flowLevel > this.deepestFlow) this.deepestFlow = this.flowLevel;
    if (depth > this.bounds.maxDepth) throw new Refusal('depth', offset);
  }

  /** What the scan measured: the deepest nesting (of flow collections alone too) and the values counted. */
  measured(): YamlTextMeasure {
    return { depth: this.deepest, flowDepth: this.deepestFlow, nodes: this.nodes };
  }

  private count(offset: number): void {
    this.nodes += 1;
    if (this.nodes > this.bounds.maxNodes) throw new Refusal('nodes', offset);
  }

  private markNode(): void {
    if (this.nodeCol === -1) this.nodeCol = this.pos - this.lineStart;
  }

  /** Spaces and tabs from `pos`. */
  private skipSpaces(): void {
    let c = this.at(this.pos);
    while (c === SPACE || c === TAB) c = this.at(++this.pos);
  }

  /** The lexer's `parseDocument` loop, until the line (or the scalar or flow it started) ends. */
  private documentState(): void {
    let last = -1;
    for (;;) {
      // Every turn moves on: a character the lexer would fail on is taken as text.
      if (this.pos === last) this.pos += 1;
      last = this.pos;
      this.skipSpaces();
      this.pushIndicators();
      const c = this.at(this.pos);
      if (Number.isNaN(c)) return;
      if (c === HASH || c === LF || c === CR) {
        if (c === CR && this.at(this.pos + 1) !== LF) {
          // A lone CR is text to the lexer (a plain scalar).
          this.markNode();
          this.plainScalar();
          continue;
        }
        this.skipLine();
        return;
      }
      // A sequence item's node: counted with its `-` already.
      const counted = this.itemPending;
      this.itemPending = false;
      switch (c) {
        case OPEN_SQUARE:
        case OPEN_CURLY:
          this.markNode();
          this.pos += 1;
          this.flowKey = false;
          this.flowLevel = 1;
          if (!counted) this.count(this.pos - 1);
          this.checkDepth(this.pos - 1);
          if (this.flowState()) return;
          continue;
        case CLOSE_SQUARE:
        case CLOSE_CURLY:
          this.pos += 1;
          continue;
        case STAR:
          this.markNode();
          this.skipAnchor();
          continue;
        case DQUOTE:
        case SQUOTE:
          this.markNode();
          this.quotedScalar();
          continue;
        case PIPE:
        case GT:
          this.blockScalar();
          return;
        default:
          this.markNode();
          this.plainScalar();
      }
    }
  }

  /** Tags, anchors and the `-`, `?`, `:` indicators before a node (the lexer's `pushIndicators`). */
  private pushIndicators(): void {
    for (;;) {
      const c = this.at(this.pos);
      if (c === BANG) {
        this.markNode();
        this.skipTag();
        this.skipSpaces();
        continue;
      }
      if (c === AMP) {
        this.markNode();
        this.skipAnchor();
        this.skipSpaces();
        continue;
      }
      if (c === DASH || c === QUESTION || c === COLON) {
        const inFlow = this.flowLevel > 0;
        const c1 = this.at(this.pos + 1);
        if (isEmpty(c1) || (inFlow && isFlowIndicator(c1))) {
          if (!inFlow) {
            this.indentNext = this.indentValue + 1;
            if (c === COLON && this.nodeCol !== -1 && !this.keyOnLine) {
              // `key:` on this line: the line holds a mapping at the key's column.
              this.keyOnLine = true;
              this.addEntry(MAP, this.nodeCol);
            }
            if (c === COLON || c === QUESTION) this.count(this.pos);
            this.itemPending = c === QUESTION;
          } else if (this.flowKey) this.flowKey = false;
          this.nodeCol = -1;
          this.pos += 1;
          this.skipSpaces();
          continue;
        }
      }
      return;
    }
  }

  private skipAnchor(): void {
    let i = this.pos;
    while (!endsAnchor(this.at(i))) i += 1;
    this.pos = i;
  }

  private skipTag(): void {
    let i = this.pos + 1;
    if (this.at(i) === LT) {
      let c = this.at(++i);
      while (!isEmpty(c) && c !== GT) c = this.at(++i);
      this.pos = c === GT ? i + 1 : i;
      return;
    }
    let c = this.at(i);
    while (!Number.isNaN(c)) {
      if (isTagChar(c)) c = this.at(++i);
      else if (c === PERCENT && isHex(this.at(i + 1)) && isHex(this.at(i + 2))) c = this.at((i += 3));
      else break;
    }
    this.pos = i;
  }

  /**
   * Whether a scalar goes on at the line beginning at `offset` (the lexer's
   * `continueScalar`): -1 when it ends there, else where its text resumes.
   */
  private continueScalar(offset: number): number {
    let c = this.at(offset);
    if (this.indentNext > 0) {
      let indent = 0;
      while (c === SPACE) c = this.at(++indent + offset);
      if (c === CR && this.at(indent + offset + 1) === LF) return offset + indent + 1;
      return c === LF || indent >= this.indentNext ? offset + indent : -1;
    }
    if (
      (c === DASH || c === DOT) &&
      this.at(offset + 1) === c &&
      this.at(offset + 2) === c &&
      isEmpty(this.at(offset + 3))
    )
      return -1;
    return offset;
  }

  /** The lexer's `parseQuotedScalar`: to the closing quote, or to a line that ends it early. */
  private quotedScalar(): void {
    const s = this.s;
    const quote = this.at(this.pos);
    let end = -1;
    for (let i = this.pos + 1; i < s.length; i += 1) {
      const c = this.at(i);
      if (c !== quote) continue;
      if (quote === SQUOTE) {
        if (this.at(i + 1) === SQUOTE) {
          i += 1;
          continue;
        }
      } else {
        let n = 0;
        while (this.at(i - 1 - n) === BACKSLASH) n += 1;
        if (n % 2 === 1) continue;
      }
      end = i;
      break;
    }
    if (end === -1) {
      // Unterminated: the lexer takes the rest of the text as this scalar.
      this.pos = s.length;
      return;
    }
    let nl = s.indexOf('\n', this.pos);
    while (nl !== -1 && nl < end) {
      const cs = this.continueScalar(nl + 1);
      if (cs === -1) {
        // Ended by a less indented line: the lexer resumes before that line break.
        this.pos = nl - (this.at(nl - 1) === CR ? 1 : 0);
        return;
      }
      this.newLineAt(nl + 1);
      nl = s.indexOf('\n', cs);
    }
    this.pos = end + 1;
  }

  /** The lexer's `parseBlockScalarHeader` and `parseBlockScalar`: the text lines of `|` / `>`. */
  private blockScalar(): void {
    const s = this.s;
    let explicit = -1;
    let i = this.pos;
    for (;;) {
      const c = this.at(++i);
      if (c > 48 && c <= 57) explicit = c - 49;
      else if (c !== 43 && c !== DASH) break;
    }
    // The header's rest (spaces, a comment) ends with its line.
    this.skipLine();
    let nl = this.pos - 1;
    let indent = 0;
    let j = this.pos;
    for (; j < s.length; j += 1) {
      const c = this.at(j);
      if (c === SPACE) indent += 1;
      else if (c === LF) {
        nl = j;
        indent = 0;
      } else if (c === CR && this.at(j + 1) === LF) continue;
      else break;
    }
    if (indent >= this.indentNext) {
      this.indentNext = explicit === -1 ? indent : explicit + (this.indentNext === 0 ? 1 : this.indentNext);
      for (;;) {
        const cs = this.continueScalar(nl + 1);
        if (cs === -1) break;
        nl = s.indexOf('\n', cs);
        if (nl === -1) break;
      }
      if (nl === -1) nl = s.length;
    }
    // The lexer takes less indented tabs after the text into the scalar (to report them).
    let k = nl + 1;
    while (this.at(k) === SPACE) k += 1;
    if (this.at(k) === TAB) {
      let c = this.at(k);
      while (c === TAB || c === SPACE || c === CR || c === LF) c = this.at(++k);
      nl = k - 1;
    }
    this.pos = Math.min(nl + 1, s.length);
    this.lineStart = s.lastIndexOf('\n', this.pos - 1) + 1;
  }

  /** The lexer's `parsePlainScalar`, across the lines it continues on. */
  private plainScalar(): void {
    const s = this.s;
    const inFlow = this.flowLevel > 0;
    let end = this.pos - 1;
    let i = this.pos - 1;
    let lineStart = this.lineStart;
    for (;;) {
      i += 1;
      if (i >= s.length) break;
      let c = this.at(i);
      if (c === COLON) {
        const next = this.at(i + 1);
        if (isEmpty(next) || (inFlow && isFlowIndicator(next))) break;
        end = i;
      } else if (isEmpty(c)) {
        let next = this.at(i + 1);
        if (c === CR) {
          if (next === LF) {
            i += 1;
            c = LF;
            next = this.at(i + 1);
          } else end = i;
        }
        if (next === HASH || (inFlow && isFlowIndicator(next))) break;
        if (c === LF) {
          const cs = this.continueScalar(i + 1);
          if (cs === -1) break;
          lineStart = i + 1;
          i = Math.max(i, cs - 2);
        }
      } else {
        if (inFlow && isFlowIndicator(c)) break;
        end = i;
      }
    }
    this.pos = end + 1;
    // Columns on a continued line count from that line.
    if (lineStart <= this.pos) this.lineStart = lineStart;
  }

  /**
   * The lexer's `parseFlowCollection` loop until the outermost `]` / `}` (or the line that
   * ends it as an error). @returns true when it ended at a line start (the block state
   * takes over there).
   */
  private flowState(): boolean {
    const s = this.s;
    let last = -1;
    for (;;) {
      if (this.pos === last) this.pos += 1;
      last = this.pos;
      let indent = -1;
      let moved = true;
      while (moved) {
        moved = false;
        let c = this.at(this.pos);
        if (c === LF || (c === CR && this.at(this.pos + 1) === LF)) {
          this.pos += c === CR ? 2 : 1;
          this.newLineAt(this.pos);
          let k = this.pos;
          while (this.at(k) === SPACE) k += 1;
          indent = k - this.pos;
          this.indentValue = indent;
          this.pos = k;
          moved = true;
          c = this.at(this.pos);
        }
        while (c === SPACE || c === TAB) {
          c = this.at(++this.pos);
          moved = true;
        }
      }
      if (this.pos >= s.length) return true;
      const c = this.at(this.pos);
      const atMarker =
        indent === 0 &&
        (c === DASH || c === DOT) &&
        this.at(this.pos + 1) === c &&
        this.at(this.pos + 2) === c &&
        isEmpty(this.at(this.pos + 3));
      if ((indent !== -1 && indent < this.indentNext && c !== HASH) || atMarker) {
        const atFlowEnd =
          indent === this.indentNext - 1 && this.flowLevel === 1 && (c === CLOSE_SQUARE || c === CLOSE_CURLY);
        if (!atFlowEnd) {
          // A less indented line ends the flow collection (an error to the parser); the
          // lexer goes on at that line's start.
          this.flowLevel = 0;
          return true;
        }
      }
      while (this.at(this.pos) === COMMA) {
        // The comma counts the item after it.
        this.count(this.pos);
        this.itemPending = true;
        this.pos += 1;
        this.skipSpaces();
        this.flowKey = false;
      }
      this.pushIndicators();
      const d = this.at(this.pos);
      const counted = this.itemPending;
      if (d !== LF && d !== CR && d !== HASH) this.itemPending = false;
      switch (d) {
        case LF:
        case CR:
          if (d === CR && this.at(this.pos + 1) !== LF) {
            this.flowKey = false;
            this.plainScalar();
          }
          continue;
        case HASH: {
          const nl = s.indexOf('\n', this.pos);
          this.pos = nl === -1 ? s.length : nl;
          continue;
        }
        case OPEN_SQUARE:
        case OPEN_CURLY:
          this.pos += 1;
          this.flowKey = false;
          this.flowLevel += 1;
          if (!counted) this.count(this.pos - 1);
          this.checkDepth(this.pos - 1);
          continue;
        case CLOSE_SQUARE:
        case CLOSE_CURLY:
          this.pos += 1;
          this.flowKey = true;
          this.flowLevel -= 1;
          if (this.flowLevel === 0) return false;
          continue;
        case STAR:
          this.skipAnchor();
          continue;
        case DQUOTE:
        case SQUOTE:
          this.flowKey = true;
          this.quotedScalar();
          continue;
        case COLON: {
          const next = this.at(this.pos + 1);
          if (this.flowKey || isEmpty(next) || next === COMMA) {
            this.flowKey = false;
            this.pos += 1;
            this.skipSpaces();
            continue;
          }
          this.flowKey = false;
          this.plainScalar();
          continue;
        }
        default:
          if (Number.isNaN(d)) return true;
          this.flowKey = false;
          this.plainScalar();
      }
    }
  }
}

/** What {@link measureYamlText} reports. */
export interface YamlTextMeasure {
  /** Deepest nesting of collections, block and flow. */
  readonly depth: number;
  /** Deepest nesting of flow collections alone. */
  readonly flowDepth: number;
  /** Values counted (the lower estimate bounded by `maxNodes`). */
  readonly nodes: number;
}

/**
 * The measures {@link prescanYaml} compares with its bounds, without bounds (tests and
 * benchmarks compare them with the `yaml` library's own view of the text).
 */
export function measureYamlText(text: string): YamlTextMeasure {
  const unbounded = { maxBytes: Infinity, maxDepth: Infinity, maxNodes: Infinity };
  const scanner = new Scanner(text, unbounded);
  scanner.run();
  return scanner.measured();
}

/** 1-based line and column of `offset` in `text`. */
export function positionOf(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let nl = text.indexOf('\n'); nl !== -1 && nl < offset; nl = text.indexOf('\n', nl + 1)) {
    line += 1;
    lineStart = nl + 1;
  }
  return { line, column: offset - lineStart + 1 };
}

/**
 * Checks `text` against `bounds` in one pass, before any YAML parse.
 *
 * @param text a YAML stream (JSON is YAML: the same scan bounds it)
 * @param bounds default {@link DEFAULT_YAML_TEXT_BOUNDS}
 * @returns the first bound passed, with a message naming it and where it was passed;
 *   `undefined` when the text keeps within every bound. Never throws.
 */
export function prescanYaml(
  text: string,
  bounds: YamlTextBounds = DEFAULT_YAML_TEXT_BOUNDS,
): YamlTextProblem | undefined {
  if (utf8LengthPast(text, bounds.maxBytes)) {
    return {
      bound: 'bytes',
      message: `the text is larger than ${bounds.maxBytes} bytes (its size is bounded)`,
      line: 1,
      column: 1,
    };
  }
  try {
    new Scanner(text, bounds).run();
    return undefined;
  } catch (error: unknown) {
    if (!(error instanceof Refusal)) throw error;
    const { line, column } = positionOf(text, error.offset);
    const where = `at line ${line}, column ${column}`;
    const message =
      error.bound === 'depth'
        ? `collections nest deeper than ${bounds.maxDepth} levels ${where} (the nesting depth is bounded)`
        : `the text holds more than ${bounds.maxNodes} values ${where} (the number of values is bounded)`;
    return { bound: error.bound, message, line, column };
  }
}
