import { DaguError } from '@dagu-mcp/contracts';
import {
  decodeDagSearchCursor as decodeSearchCursor,
  encodeDagSearchCursor as encodeSearchCursor,
} from './dag-search-cursor';

/** Spec 021 `cursor`: opaque, returned by the same search target; a bad one is invalid_tool_input on `cursor`. */
const scope = { search: 'echo', workspace: undefined };

function expectInvalidCursor(fn: () => unknown): void {
  let caught: unknown;
  try {
    fn();
  } catch (error: unknown) {
    caught = error;
  }
  expect(caught).toBeInstanceOf(DaguError);
  expect(caught).toMatchObject({ code: 'invalid_tool_input', field: 'cursor' });
}

describe('dag_search cursor', () => {
  it('round-trips the position', () => {
    const cursor = encodeSearchCursor({ after: 'nightly-report' }, scope);
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodeSearchCursor(cursor, scope)).toEqual({ after: 'nightly-report' });
  });

  it('treats an absent workspace and `all` as the same search', () => {
    const cursor = encodeSearchCursor({ after: 'a' }, { search: 'x', workspace: 'all' });
    expect(decodeSearchCursor(cursor, { search: 'x', workspace: undefined })).toEqual({ after: 'a' });
  });

  it.each([
    ['not base64url', 'not a cursor!'],
    ['padding', `${Buffer.from('{}').toString('base64')}==`],
    ['not JSON', Buffer.from('hello').toString('base64url')],
    ['JSON of another shape', Buffer.from(JSON.stringify({ after: 'a' })).toString('base64url')],
    ['another version', Buffer.from(JSON.stringify({ v: 2, after: 'a', scope: 'x' })).toString('base64url')],
    ['an empty position', Buffer.from(JSON.stringify({ v: 1, after: '', scope: 'x' })).toString('base64url')],
    ['far too long', 'A'.repeat(2000)],
  ])('refuses %s', (_label, cursor) => {
    expectInvalidCursor(() => decodeSearchCursor(cursor, scope));
  });

  it('refuses a cursor of another search text or workspace', () => {
    const cursor = encodeSearchCursor({ after: 'a' }, scope);
    expectInvalidCursor(() => decodeSearchCursor(cursor, { search: 'Echo', workspace: undefined }));
    expectInvalidCursor(() => decodeSearchCursor(cursor, { search: 'echo', workspace: 'ops' }));
  });
});
