import { createHash } from 'node:crypto';
import { DaguError, type RunsQuery } from '@dagu-mcp/contracts';
import { decodeRunsCursor, encodeRunsCursor } from './runs-cursor';

/** 021 "Run collection": `nextCursor` is opaque and belongs to the query's filters. */
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

const query: RunsQuery = { name: 'nightly', status: [4, 2], labels: ['b', 'a'] };

describe('runs cursor', () => {
  it('round-trips the pk', () => {
    expect(decodeRunsCursor(encodeRunsCursor(1234, query), query)).toBe(1234);
  });

  it('ignores the order of list filters, and limit and cursor', () => {
    const cursor = encodeRunsCursor(7, query);
    expect(
      decodeRunsCursor(cursor, { name: 'nightly', status: [2, 4], labels: ['a', 'b'], limit: 5, cursor: 'x' }),
    ).toBe(7);
  });

  it('decodes what run-service’s earlier cursor codec wrote (same payload and fingerprint)', () => {
    const filters = {
      name: 'nightly',
      dagRunId: null,
      status: [2, 4],
      fromDate: null,
      toDate: null,
      labels: ['a', 'b'],
    };
    const scope = createHash('sha256').update(JSON.stringify(filters)).digest('base64url').slice(0, 16);
    const legacy = Buffer.from(JSON.stringify({ v: 1, after: 99, scope }), 'utf8').toString('base64url');
    expect(encodeRunsCursor(99, query)).toBe(legacy);
    expect(decodeRunsCursor(legacy, query)).toBe(99);
  });

  it.each([
    ['other filters', { ...query, name: 'other' }],
    ['another status set', { ...query, status: [2] }],
    ['no filters', {}],
  ])('is refused for %s', (_label, other: RunsQuery) => {
    expectInvalidCursor(() => decodeRunsCursor(encodeRunsCursor(7, query), other));
  });

  it.each([
    ['a zero pk', { v: 1, after: 0 }],
    ['a fractional pk', { v: 1, after: 1.5 }],
    ['a string pk', { v: 1, after: '7' }],
  ])('refuses %s', (_label, payload) => {
    const scope = JSON.parse(Buffer.from(encodeRunsCursor(7, query), 'base64url').toString('utf8')).scope as string;
    expectInvalidCursor(() =>
      decodeRunsCursor(Buffer.from(JSON.stringify({ ...payload, scope })).toString('base64url'), query),
    );
  });

  it('refuses garbage', () => {
    expectInvalidCursor(() => decodeRunsCursor('not a cursor', query));
    expectInvalidCursor(() => decodeRunsCursor('x'.repeat(5000), query));
  });
});
