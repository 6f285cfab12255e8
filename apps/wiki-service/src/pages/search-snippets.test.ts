import { clipLine, findMatches, MAX_MATCHES_PER_PAGE, MAX_SNIPPET_CHARS } from './search-snippets';

describe('findMatches (spec 021 Wiki search model: line snippets, hasMoreMatches)', () => {
  test('matching lines, 1-based, case-insensitive, CR dropped', () => {
    const content = '---\ntitle: Deploy\n---\nRun the DEPLOY job\r\nnothing here\nredeploy later';
    expect(findMatches(content, 'deploy')).toEqual({
      matches: [
        { line: 2, text: 'title: Deploy' },
        { line: 4, text: 'Run the DEPLOY job' },
        { line: 6, text: 'redeploy later' },
      ],
      hasMoreMatches: false,
    });
  });

  test('at most five snippets, then hasMoreMatches', () => {
    const content = Array.from({ length: MAX_MATCHES_PER_PAGE + 2 }, (_, i) => `hit ${i}`).join('\n');
    const { matches, hasMoreMatches } = findMatches(content, 'HIT');
    expect(matches).toHaveLength(MAX_MATCHES_PER_PAGE);
    expect(matches[4]).toEqual({ line: 5, text: 'hit 4' });
    expect(hasMoreMatches).toBe(true);
    expect(findMatches(content, 'hit', MAX_MATCHES_PER_PAGE + 2).hasMoreMatches).toBe(false);
  });

  test('a search text spanning lines reports the line each occurrence starts on', () => {
    expect(findMatches('a\nend of one\nstart of two\nend of one\nstart of two', 'one\nSTART').matches.map((m) => m.line)).toEqual([2, 4]);
  });

  test('no match, no snippets (a page found by its title alone)', () => {
    expect(findMatches('body', 'title')).toEqual({ matches: [], hasMoreMatches: false });
  });

  test('long lines are clipped around the match with ellipses', () => {
    const line = `${'a'.repeat(500)}needle${'b'.repeat(500)}`;
    const [match] = findMatches(line, 'needle').matches;
    expect(match?.text.length).toBe(MAX_SNIPPET_CHARS);
    expect(match?.text.startsWith('…')).toBe(true);
    expect(match?.text.endsWith('…')).toBe(true);
    expect(match?.text).toContain('needle');
  });

  test('clipLine keeps short lines and the start of a line matched early', () => {
    expect(clipLine('short', 0)).toBe('short');
    const clipped = clipLine(`needle${'x'.repeat(300)}`, 0, 20);
    expect(clipped).toBe(`needle${'x'.repeat(13)}…`);
    expect(clipLine(`${'x'.repeat(300)}end`, 300, 20)).toBe(`…${'x'.repeat(16)}end`);
  });
});
