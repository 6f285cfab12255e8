import { clipLine, findLineMatches, MAX_MATCHES_PER_RESULT, MAX_SNIPPET_CHARS } from './line-snippets';

/** Spec 021 DAG and Wiki search models: line-level snippets `{line, text}` and `hasMoreMatches`. */
describe('findLineMatches', () => {
  const spec = [
    'description: Nightly ECHO',
    'steps:',
    '  - name: a',
    '    run: echo one',
    '  - name: b',
    '    run: echo two',
  ].join('\n');

  it('returns matching lines, 1-based, with their full text, case-insensitively', () => {
    expect(findLineMatches(spec, 'Echo')).toEqual({
      matches: [
        { line: 1, text: 'description: Nightly ECHO' },
        { line: 4, text: '    run: echo one' },
        { line: 6, text: '    run: echo two' },
      ],
      hasMoreMatches: false,
    });
  });

  it('counts frontmatter lines and drops the \\r of CRLF lines', () => {
    const content = '---\ntitle: Deploy\n---\nRun the DEPLOY job\r\nnothing here\nredeploy later';
    expect(findLineMatches(content, 'deploy').matches).toEqual([
      { line: 2, text: 'title: Deploy' },
      { line: 4, text: 'Run the DEPLOY job' },
      { line: 6, text: 'redeploy later' },
    ]);
  });

  it(`caps the matches (default ${MAX_MATCHES_PER_RESULT}) and reports hasMoreMatches`, () => {
    const many = Array.from({ length: 8 }, (_, i) => `line ${i} match`).join('\n');
    const result = findLineMatches(many, 'MATCH');
    expect(result.matches.map((m) => m.line)).toEqual([1, 2, 3, 4, 5]);
    expect(result.hasMoreMatches).toBe(true);
    expect(findLineMatches(many, 'match', { maxMatches: 8 }).hasMoreMatches).toBe(false);
  });

  it('finds nothing when no line matches (a wiki page found by its title alone)', () => {
    expect(findLineMatches(spec, 'absent')).toEqual({ matches: [], hasMoreMatches: false });
  });

  it('reports the line each occurrence of a multi-line search text starts on', () => {
    expect(findLineMatches(spec, 'name: a\n    run').matches).toEqual([{ line: 3, text: '  - name: a' }]);
    expect(
      findLineMatches('a\nend of one\nstart of two\nend of one\nstart of two', 'one\nSTART').matches.map((m) => m.line),
    ).toEqual([2, 4]);
  });

  it('treats LIKE wildcards in the search text literally', () => {
    expect(findLineMatches('a: 50%\nb: 5_0', '%').matches).toEqual([{ line: 1, text: 'a: 50%' }]);
  });

  it(`cuts a long line to ${MAX_SNIPPET_CHARS} characters around the match, with ellipses`, () => {
    const line = `${'x'.repeat(500)}NEEDLE${'y'.repeat(500)}`;
    const [match] = findLineMatches(line, 'needle').matches;
    expect(match?.text).toHaveLength(MAX_SNIPPET_CHARS);
    expect(match?.text).toContain('NEEDLE');
    expect(match?.text.startsWith('…')).toBe(true);
    expect(match?.text.endsWith('…')).toBe(true);
    expect(match?.text.indexOf('NEEDLE')).toBe(81); // the ellipsis, then 80 characters before the match
  });

  it('honours a smaller maxLength', () => {
    const [match] = findLineMatches(`${'x'.repeat(100)}needle${'y'.repeat(100)}`, 'needle', { maxLength: 30 }).matches;
    expect(match?.text).toHaveLength(30);
    expect(match?.text).toContain('needle');
  });

  it('keeps the line when lower-casing changes its length (no usable index)', () => {
    const line = `İ${'a'.repeat(300)}needle`;
    const [match] = findLineMatches(line, 'needle').matches;
    expect(match?.text.startsWith('İ')).toBe(true);
    expect(match?.text).toHaveLength(MAX_SNIPPET_CHARS);
  });
});

describe('clipLine', () => {
  it('keeps a short text as is', () => {
    expect(clipLine('short', 0)).toBe('short');
    expect(clipLine('short', 0, 10)).toBe('short');
  });

  it('cuts the end only when the match is near the start', () => {
    expect(clipLine('abcdefghijklmnop', 0, 10)).toBe('abcdefghi…');
    expect(clipLine(`needle${'x'.repeat(300)}`, 0, 20)).toBe(`needle${'x'.repeat(13)}…`);
  });

  it('cuts the start only when the match is near the end', () => {
    expect(clipLine(`${'x'.repeat(300)}end`, 300, 20)).toBe(`…${'x'.repeat(16)}end`);
    const clipped = clipLine(`${'a'.repeat(100)}END`, 100, 20);
    expect(clipped).toHaveLength(20);
    expect(clipped.endsWith('END')).toBe(true);
  });
});
