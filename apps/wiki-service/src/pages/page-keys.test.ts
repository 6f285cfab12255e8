import fc from 'fast-check';
import { isValidWikiPath } from '@dagu-mcp/contracts';
import { containsPattern, escapeLike, nameKeyOf, pageNameOf, prefixPattern, typeKeyOf } from './page-keys';
import { buildPageTree } from './page-tree';
import type { PageEntryRecord } from './page.records';
import type { WikiTreeNode } from '@dagu-mcp/contracts';

/** Code-unit order, as PostgreSQL's COLLATE "C" compares the key columns. */
const byKey = (key: (path: string) => string) => (a: string, b: string) =>
  key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0;

function record(path: string, workspace = 'team', at = 0): PageEntryRecord {
  return { workspace, path, title: path, tags: [], size: 1, version: 1, updatedAt: new Date(at) };
}

/** Page ids of a tree in drawing order (depth first). */
function leaves(nodes: readonly WikiTreeNode[]): string[] {
  return nodes.flatMap((node) => (node.type === 'file' ? [node.id] : leaves(node.children)));
}

describe('sort keys (spec 021 wiki sort; dagu-model §2 paths)', () => {
  test('name key replaces the separator with U+0001, type key marks folders before pages', () => {
    expect(nameKeyOf('guides/intro')).toBe('guides\u0001intro');
    expect(typeKeyOf('guides/intro')).toBe('0guides\u00011intro');
    expect(typeKeyOf('readme')).toBe('1readme');
    expect(typeKeyOf('a/b/c')).toBe('0a\u00010b\u00011c');
  });

  test('name order keeps a folder together although "-" and "." sort before "/"', () => {
    const paths = ['a/y', 'a-b', 'a/x', 'a.c', 'a'];
    expect([...paths].sort(byKey(nameKeyOf))).toEqual(['a', 'a/x', 'a/y', 'a-b', 'a.c']);
  });

  test('type order puts each level’s folders first', () => {
    const paths = ['z', 'b/page', 'a', 'b/c/deep', 'c/x'];
    expect([...paths].sort(byKey(typeKeyOf))).toEqual(['b/c/deep', 'b/page', 'c/x', 'a', 'z']);
  });

  const segment = fc.stringMatching(/^[A-Za-z0-9._-]{1,4}$/).filter((s) => s !== '.' && s !== '..');
  const pathArb = fc.array(segment, { minLength: 1, maxLength: 4 }).map((parts) => parts.join('/'));

  test.each([
    ['name', nameKeyOf],
    ['type', typeKeyOf],
  ] as const)('paging by the %s key is the tree’s drawing order (property)', (sort, key) => {
    fc.assert(
      fc.property(fc.uniqueArray(pathArb, { maxLength: 30 }), (paths) => {
        // `a` and `a/b` may both be pages: a page and a folder of the same name.
        const valid = paths.filter(isValidWikiPath);
        const sorted = [...valid].sort(byKey(key));
        const tree = buildPageTree(
          sorted.map((p) => record(p)),
          { allWorkspaces: false, sort, order: 'asc' },
        );
        expect(leaves(tree)).toEqual(sorted);
        const desc = buildPageTree(
          sorted.map((p) => record(p)),
          { allWorkspaces: false, sort, order: 'desc' },
        );
        expect(leaves(desc)).toEqual([...sorted].reverse());
      }),
    );
  });
});

describe('LIKE patterns', () => {
  test('escape %, _ and backslash so paths with "_" match literally', () => {
    expect(escapeLike('a_b%c\\d')).toBe('a\\_b\\%c\\\\d');
    expect(prefixPattern('run_books/')).toBe('run\\_books/%');
    expect(containsPattern('100%')).toBe('%100\\%%');
  });

  test('page name is the last segment', () => {
    expect(pageNameOf('a/b/c')).toBe('c');
    expect(pageNameOf('readme')).toBe('readme');
  });
});
