/**
 * The pre-scan of authors' YAML: bounds on bytes, nesting depth and
 * values, measured before any parse, with strings, comments and block scalars left out
 * exactly where the `yaml` library's lexer leaves them out.
 */
import fc from 'fast-check';
import { isCollection, isPair, Lexer, parseAllDocuments, stringify } from 'yaml';
import { DEFAULT_YAML_TEXT_BOUNDS, measureYamlText, prescanYaml, type YamlTextBounds } from './yaml-prescan';

const SMALL: YamlTextBounds = { maxBytes: 1000, maxDepth: 3, maxNodes: 20 };

describe('prescanYaml', () => {
  it('refuses the nesting attack (200 000 and 500 000 brackets) at the 65th level', () => {
    for (const n of [200_000, 500_000]) {
      const problem = prescanYaml(`steps: ${'['.repeat(n)}${']'.repeat(n)}`);
      expect(problem).toEqual({
        bound: 'depth',
        message: 'collections nest deeper than 64 levels at line 1, column 71 (the nesting depth is bounded)',
        line: 1,
        column: 71,
      });
    }
  });

  it('keeps within bounds a DAG of ordinary shape', () => {
    const spec = [
      'name: nightly # a comment with [[[ and {{{',
      'steps:',
      '  - name: build',
      '    command: echo "[[[[" \'{{{{\' [x]',
      '    script: |',
      '      echo [[[[[[',
      '      ls {{{{{',
      '    depends: [a, b]',
      '    env:',
      '    - A: "1"',
      '  - name: x',
      '    foreach: {items: [1, 2, [3, 4]], key: k}',
    ].join('\n');
    expect(prescanYaml(spec, { ...DEFAULT_YAML_TEXT_BOUNDS, maxDepth: 6 })).toBeUndefined();
    expect(measureYamlText(spec).depth).toBe(6);
  });

  it.each([
    ['flow sequences', 'a: [[[1]]]', 1, 6],
    ['flow mappings', 'a: {b: {c: {d: 1}}}', 1, 12],
    ['block mappings', 'a:\n  b:\n    c:\n      d: 1', 4, 7],
    ['block sequences in compact form', '- - - - x', 1, 7],
    ['sequences at their mapping’s column', 'a:\n- b:\n  - c', 3, 3],
    ['flow inside block', 'a:\n  b:\n    - [x]', 3, 7],
    ['a multi-line flow collection', 'a: [\n  [\n    [ x ]\n  ]\n]', 3, 5],
  ])('counts nesting of %s', (_label, text, line, column) => {
    expect(prescanYaml(text, SMALL)).toMatchObject({ bound: 'depth', line, column });
    expect(prescanYaml(text, { ...SMALL, maxDepth: 4 })).toBeUndefined();
  });

  it.each([
    ['double-quoted strings', 'a: "[[[[[[" \nb: "x\\"[[[[[["'],
    ['single-quoted strings', "a: '[[[''[[[['"],
    ['a multi-line quoted string', 'a: "[[[[\n  [[[[[\n  ]"'],
    ['plain scalars', 'a: x[[[[[ {{{{ ]]\nb: echo [[[[[[[[[['],
    ['a multi-line plain scalar', 'a: text\n  [[[[[[[[\n  more'],
    ['comments', '# [[[[[[[[\na: 1 # {{{{{{{{\n  # [[[[[[[['],
    ['literal block scalars', 'a: |\n  [[[[[[[[\n  {{{{{{{{\nb: 1'],
    ['folded block scalars with indicators', 'a: >2-\n   [[[[[[[[\n\n   {{{{\nb: 1'],
    ['tags and anchors', 'a: !!str &x "[[[["\nb: *x'],
  ])('does not count brackets in %s', (_label, text) => {
    expect(prescanYaml(text, SMALL)).toBeUndefined();
  });

  it('counts brackets after a quoted string that a less indented line ends', () => {
    // The lexer ends the string at `b:` (an error), then sees b's brackets as structure.
    expect(prescanYaml('a:\n  k: "open\nb: [[[[[[ "', SMALL)).toMatchObject({ bound: 'depth', line: 3 });
    // Never closed, the string runs to the end of the text for the lexer too.
    expect(prescanYaml('a:\n  k: "open\nb: [[[[[[', SMALL)).toBeUndefined();
  });

  it('counts brackets after a block scalar that a less indented line ends', () => {
    expect(prescanYaml('a:\n  k: |\n      text\n    b: [[[[[[', SMALL)).toMatchObject({ bound: 'depth', line: 4 });
  });

  it('refuses a text past its size in UTF-8 bytes, before scanning', () => {
    expect(prescanYaml(`a: "${'é'.repeat(497)}"`, SMALL)).toBeUndefined();
    expect(prescanYaml(`a: "${'é'.repeat(498)}"`, SMALL)).toEqual({
      bound: 'bytes',
      message: 'the text is larger than 1000 bytes (its size is bounded)',
      line: 1,
      column: 1,
    });
  });

  it('refuses a text with more values than the bound, block or flow', () => {
    // 20 keys and the document itself.
    const block = Array.from({ length: 20 }, (_, i) => `k${i}: ${i}`).join('\n');
    expect(prescanYaml(block, SMALL)).toMatchObject({
      bound: 'nodes',
      message: 'the text holds more than 20 values at line 20, column 4 (the number of values is bounded)',
    });
    expect(prescanYaml(block.split('\n').slice(1).join('\n'), SMALL)).toBeUndefined();
    expect(prescanYaml(`a: [${'1,'.repeat(25)}1]`, SMALL)).toMatchObject({ bound: 'nodes', line: 1 });
    expect(prescanYaml('---\n'.repeat(21), SMALL)).toMatchObject({ bound: 'nodes' });
  });

  it('never counts more values than the syntax tree holds', () => {
    // A sequence item that is a flow collection is one value (`- []`), counted once.
    expect(measureYamlText('- []\n- {}\n').nodes).toBe(3);
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6 }), fc.boolean(), (value, flow) => {
        const text = stringify(value, flow ? { collectionStyle: 'flow' } : {});
        expect(measureYamlText(text).nodes).toBeLessThanOrEqual(treeNodes(text));
      }),
      { numRuns: Number(process.env.PRESCAN_FUZZ_RUNS ?? 300) },
    );
  });

  it('measures the depth the yaml library builds, in block and flow style', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 8 }), fc.boolean(), fc.boolean(), (value, flow, indentSeq) => {
        const text = stringify(value, { collectionStyle: flow ? 'flow' : 'any', indentSeq });
        expect(measureYamlText(text).depth).toBe(treeDepth(text));
      }),
      { numRuns: 300 },
    );
  });

  it('sees every flow bracket the yaml lexer sees, on random text', () => {
    const chars = '[]{},:-?#\'"|>!&*%. \n\n\t\rab1'.split('');
    const pieces = ['---', '...', '\n  ', '\n    ', '- ', ': ', '? ', '|2-', '>+', '\\"', "''", '!<x>', '#x\n'];
    const alphabet = fc.constantFrom(...chars, ...pieces);
    fc.assert(
      fc.property(fc.array(alphabet, { maxLength: 80 }), (chars) => {
        const text = chars.join('');
        expect(measureYamlText(text).flowDepth).toBe(lexerFlowDepth(text));
      }),
      { numRuns: Number(process.env.PRESCAN_FUZZ_RUNS ?? 5000) },
    );
  });
});

/** Deepest flow nesting in the `yaml` library's own tokens. */
function lexerFlowDepth(text: string): number {
  const lexer = new Lexer();
  // The lexer's own count of open flow collections (a private field of yaml 2.x).
  const level = (): number => (lexer as unknown as { flowLevel: number }).flowLevel;
  let deepest = 0;
  for (const _token of lexer.lex(text)) deepest = Math.max(deepest, level());
  return Math.max(deepest, level());
}

/** Visits every node with the number of collections it is or is inside. */
function walk(node: unknown, visit: (node: unknown, depth: number) => void, depth = 0): void {
  if (isPair(node)) {
    walk(node.key, visit, depth);
    walk(node.value, visit, depth);
    return;
  }
  const own = isCollection(node) ? depth + 1 : depth;
  visit(node, own);
  if (isCollection(node)) for (const item of node.items) walk(item, visit, own);
}

function treeDepth(text: string): number {
  let deepest = 0;
  for (const doc of parseAllDocuments(text)) walk(doc.contents, (_node, depth) => (deepest = Math.max(deepest, depth)));
  return deepest;
}

function treeNodes(text: string): number {
  let nodes = 0;
  for (const doc of parseAllDocuments(text)) {
    nodes += 1;
    walk(doc.contents, (node) => {
      if (node !== null && node !== undefined && !isPair(node)) nodes += 1;
    });
  }
  return nodes;
}
