import { clip, extractSnippets, MAX_MATCHES_PER_RESULT, MAX_SNIPPET_LENGTH } from './search-snippets';

/** Spec 021 DAG search model: line-level snippets and `hasMoreMatches`. */
describe('extractSnippets', () => {
  const spec = ['description: Nightly ECHO', 'steps:', '  - name: a', '    run: echo one', '  - name: b', '    run: echo two'].join('\n');

  it('returns matching lines, 1-based, with their full text, case-insensitively', () => {
    expect(extractSnippets(spec, 'Echo')).toEqual({
      matches: [
        { line: 1, text: 'description: Nightly ECHO' },
        { line: 4, text: '    run: echo one' },
        { line: 6, text: '    run: echo two' },
      ],
      hasMoreMatches: false,
    });
  });

  it(`caps the matches (default ${MAX_MATCHES_PER_RESULT}) and reports hasMoreMatches`, () => {
    const many = Array.from({ length: 8 }, (_, i) => `line ${i} match`).join('\n');
    const result = extractSnippets(many, 'match');
    expect(result.matches.map((m) => m.line)).toEqual([1, 2, 3, 4, 5]);
    expect(result.hasMoreMatches).toBe(true);
    expect(extractSnippets(many, 'match', { maxMatches: 8 }).hasMoreMatches).toBe(false);
  });

  it('finds nothing when no line matches', () => {
    expect(extractSnippets(spec, 'absent')).toEqual({ matches: [], hasMoreMatches: false });
  });

  it('drops the \\r of CRLF lines', () => {
    expect(extractSnippets('a: 1\r\nb: echo\r\n', 'echo').matches).toEqual([{ line: 2, text: 'b: echo' }]);
  });

  it('reports the starting line of a search text that spans lines', () => {
    expect(extractSnippets(spec, 'name: a\n    run').matches).toEqual([{ line: 3, text: '  - name: a' }]);
  });

  it('treats LIKE wildcards in the search text literally', () => {
    expect(extractSnippets('a: 50%\nb: 5_0', '%').matches).toEqual([{ line: 1, text: 'a: 50%' }]);
  });

  it(`cuts a long line to ${MAX_SNIPPET_LENGTH} characters around the match`, () => {
    const line = `${'x'.repeat(500)}NEEDLE${'y'.repeat(500)}`;
    const [match] = extractSnippets(line, 'needle').matches;
    expect(match?.text).toHaveLength(MAX_SNIPPET_LENGTH);
    expect(match?.text).toContain('NEEDLE');
    expect(match?.text.startsWith('…')).toBe(true);
    expect(match?.text.endsWith('…')).toBe(true);
  });
});

describe('clip', () => {
  it('keeps a short text as is', () => {
    expect(clip('short', 0, 10)).toBe('short');
  });

  it('cuts the end only when the match is near the start', () => {
    expect(clip('abcdefghijklmnop', 0, 10)).toBe('abcdefghi…');
  });

  it('cuts the start only when the match is near the end', () => {
    const text = `${'a'.repeat(100)}END`;
    const clipped = clip(text, 100, 20);
    expect(clipped).toHaveLength(20);
    expect(clipped.startsWith('…')).toBe(true);
    expect(clipped.endsWith('END')).toBe(true);
  });
});
