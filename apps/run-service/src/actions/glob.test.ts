import { globToRegExp } from './glob';

describe('globToRegExp (file.list pattern, dagu-actions §1.8)', () => {
  it.each<[string, string, boolean]>([
    ['*.txt', 'a.txt', true],
    ['*.txt', 'd/a.txt', false],
    ['**/*.txt', 'a.txt', true],
    ['**/*.txt', 'd/e/a.txt', true],
    ['d/?.md', 'd/x.md', true],
    ['[ab].c', 'b.c', true],
    ['[!ab].c', 'b.c', false],
    ['a.b', 'axb', false],
  ])('%s vs %s → %s', (pattern, path, expected) => {
    expect(globToRegExp(pattern).test(path)).toBe(expected);
  });
});
