import { DaguError } from '@dagu-mcp/contracts';
import { MAX_TAGS, readPageFacts, splitFrontmatter } from './frontmatter';

function failure(content: string): DaguError {
  try {
    readPageFacts('guides/intro', content);
  } catch (error) {
    if (error instanceof DaguError) return error;
    throw error;
  }
  throw new Error('expected readPageFacts to fail');
}

describe('readPageFacts (dagu-model §7: Markdown with optional YAML frontmatter title and tags)', () => {
  test.each([
    [
      'frontmatter title and tag list',
      '---\ntitle: Deploy\ntags: [ops, deploy]\n---\n# Other\n',
      'Deploy',
      ['ops', 'deploy'],
    ],
    [
      'comma-separated tags, trimmed and de-duplicated',
      '---\ntags: "a, b ,a,, c"\n---\nbody',
      'intro',
      ['a', 'b', 'c'],
    ],
    ['numbers as tags and title', '---\ntitle: 2026\ntags:\n  - 1\n  - true\n---\n', '2026', ['1', 'true']],
    ['CRLF fences', '---\r\ntitle: Win\r\n---\r\nbody\r\n', 'Win', []],
    ['a BOM before the fence', '\uFEFF---\ntitle: Bom\n---\n', 'Bom', []],
    ['"..." closes frontmatter', '---\ntitle: Dots\n...\nbody', 'Dots', []],
    ['empty frontmatter', '---\n---\n# Heading title\n', 'Heading title', []],
    ['no frontmatter: first H1', 'intro text\n## Sub\n# Main title #\n', 'Main title', []],
    ['H1 inside a code fence is not a title', '```\n# not it\n```\n# It\n', 'It', []],
    ['no frontmatter, no H1: page name', 'plain text', 'intro', []],
    ['an unclosed fence is a thematic break, not frontmatter', '---\ntitle: x\nbody', 'intro', []],
    ['blank title falls back', '---\ntitle: "  "\n---\n', 'intro', []],
    ['null tags', '---\ntags:\n---\n', 'intro', []],
  ])('%s', (_name, content, title, tags) => {
    expect(readPageFacts('guides/intro', content)).toEqual({ title, tags });
  });

  test.each([
    ['not YAML', '---\ntitle: [unclosed\n---\n'],
    ['not a mapping', '---\n- a\n- b\n---\n'],
    ['title is a mapping', '---\ntitle: {a: 1}\n---\n'],
    ['tags is a mapping', '---\ntags: {a: 1}\n---\n'],
    ['a tag is a list', '---\ntags: [[a]]\n---\n'],
    ['too many tags', `---\ntags: [${Array.from({ length: MAX_TAGS + 1 }, (_, i) => `t${i}`).join(', ')}]\n---\n`],
    ['title too long', `---\ntitle: ${'x'.repeat(501)}\n---\n`],
  ])('refuses frontmatter that is %s: invalid_tool_input on content', (_name, content) => {
    const error = failure(content);
    expect(error.code).toBe('invalid_tool_input');
    expect(error.field).toBe('content');
  });

  test('splitFrontmatter keeps the body after the closing fence', () => {
    expect(splitFrontmatter('---\na: 1\n---\nline1\nline2')).toEqual({ yaml: 'a: 1', body: 'line1\nline2' });
    expect(splitFrontmatter('no fm')).toEqual({ yaml: undefined, body: 'no fm' });
  });
});

describe('readPageFacts: the frontmatter is bounded before it is parsed', () => {
  it('refuses `tags: ` and 100 000 nested brackets, naming the bound and the page line', () => {
    const levels = 100_000;
    const content = `---\ntitle: x\ntags: ${'['.repeat(levels)}${']'.repeat(levels)}\n---\nbody`;
    const error = failure(content);
    expect(error.code).toBe('invalid_tool_input');
    expect(error.field).toBe('content');
    expect(error.message).toBe(
      'The page frontmatter nests collections deeper than 64 levels at line 3, column 70 of the page (the nesting depth is bounded).',
    );
  });

  it('refuses frontmatter with more values than the bound, and past its size', () => {
    const keys = Array.from({ length: 5001 }, (_, i) => `k${i}: v`).join('\n');
    expect(failure(`---\n${keys}\n---\n`).message).toMatch(
      /^The page frontmatter holds more than 5000 values at line \d+, column \d+ of the page/,
    );
    expect(failure(`---\ntitle: "${'x'.repeat(300 * 1024)}"\n---\n`).message).toBe(
      'The page frontmatter is larger than 262144 bytes (its size is bounded).',
    );
  });

  it('does not count brackets in the title or tags text', () => {
    expect(readPageFacts('p', `---\ntitle: "${'['.repeat(100)}"\ntags: a[[[[, b\n---\n`)).toEqual({
      title: '['.repeat(100),
      tags: ['a[[[[', 'b'],
    });
  });
});
