import { caughtDaguError } from '../../contracts/test-fixtures/dagu-error-of';
import {
  decodeWikiSearchCursor as decodeSearchCursor,
  encodeWikiSearchCursor as encodeSearchCursor,
  type WikiSearchScope as SearchScope,
} from './wiki-search-cursor';

const scope: SearchScope = { search: 'deploy', workspace: undefined, prefix: undefined };

function codeAndField(fn: () => unknown): [string, string | undefined] {
  const error = caughtDaguError(fn);
  return [error.code, error.field];
}

describe('wiki_search cursor (spec 021: opaque continuation cursor of the same search)', () => {
  test('round-trips the position; "all" and absent workspace are the same search', () => {
    const cursor = encodeSearchCursor({ workspace: 'team', path: 'a/b' }, scope);
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodeSearchCursor(cursor, scope)).toEqual({ workspace: 'team', path: 'a/b' });
    expect(decodeSearchCursor(cursor, { ...scope, workspace: 'all' })).toEqual({ workspace: 'team', path: 'a/b' });
  });

  test.each([
    ['another search text', { ...scope, search: 'other' }],
    ['another workspace', { ...scope, workspace: 'team' }],
    ['another prefix', { ...scope, prefix: 'runbooks/' }],
  ])('is refused for %s (invalid_tool_input on cursor)', (_name, other) => {
    const cursor = encodeSearchCursor({ workspace: 'team', path: 'a' }, scope);
    expect(codeAndField(() => decodeSearchCursor(cursor, other))).toEqual(['invalid_tool_input', 'cursor']);
  });

  test.each(['not base64!', 'eyJ2Ijo5fQ', Buffer.from('not json').toString('base64url'), 'x'.repeat(5000)])(
    'refuses garbage %#',
    (cursor) => {
      expect(codeAndField(() => decodeSearchCursor(cursor, scope))).toEqual(['invalid_tool_input', 'cursor']);
    },
  );
});
