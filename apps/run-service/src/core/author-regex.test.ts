import { compileAuthorRegex } from './author-regex';

/** DAG authors' `re:` patterns: RE2 syntax, linear-time matching. */
describe('compileAuthorRegex', () => {
  it('finds a match anywhere in the line, as RegExp.test does', () => {
    const test = compileAuthorRegex('^WARN');
    expect(typeof test === 'function' && [test('WARNING: x'), test('no WARN')]).toEqual([true, false]);
  });

  it('matches a pattern that backtracks exponentially in JavaScript on a long line', () => {
    const test = compileAuthorRegex('^(a+)+$');
    expect(typeof test === 'function' && test(`${'a'.repeat(100_000)}b`)).toBe(false);
  });

  it('refuses what RE2 leaves out, with the reason', () => {
    expect(compileAuthorRegex('a(?=b)')).toEqual({ error: expect.stringContaining('(?=') });
    expect(compileAuthorRegex('(a')).toEqual({ error: expect.stringContaining('missing closing )') });
  });
});
