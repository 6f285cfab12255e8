import { hasMoreOf, selectionOf, windowOf, windowSize, type LogSelection } from './log-window';

function read(selection: LogSelection, total: number): { from: number; to: number; count: number; hasMore: boolean } {
  const window = windowOf(selection, total);
  const count = windowSize(window);
  return { ...window, count, hasMore: hasMoreOf(selection, total, count) };
}

describe('selectionOf', () => {
  it.each([
    [undefined, { kind: 'tail', count: 1000 }],
    [{}, { kind: 'tail', count: 1000 }],
    [{ tail: 5 }, { kind: 'tail', count: 5 }],
    [{ head: 7 }, { kind: 'head', count: 7 }],
    [{ offset: 3 }, { kind: 'range', offset: 3, limit: 1000 }],
    [
      { offset: 3, limit: 2 },
      { kind: 'range', offset: 3, limit: 2 },
    ],
    [{ limit: 4 }, { kind: 'range', offset: 1, limit: 4 }],
    [{ stream: 'stderr' as const }, { kind: 'tail', count: 1000 }],
  ])('%j → %j', (query, expected) => {
    expect(selectionOf(query)).toEqual(expected);
  });

  it('uses the given default tail (scheduler log: 500)', () => {
    expect(selectionOf(undefined, 500)).toEqual({ kind: 'tail', count: 500 });
  });
});

describe('windowOf / hasMoreOf (dagu-model §6)', () => {
  it.each<[string, LogSelection, number, { from: number; to: number; count: number; hasMore: boolean }]>([
    ['tail of a longer stream', { kind: 'tail', count: 3 }, 10, { from: 8, to: 10, count: 3, hasMore: true }],
    ['tail larger than the stream', { kind: 'tail', count: 30 }, 10, { from: 1, to: 10, count: 10, hasMore: false }],
    ['tail of an empty stream', { kind: 'tail', count: 3 }, 0, { from: 1, to: 0, count: 0, hasMore: false }],
    ['head', { kind: 'head', count: 4 }, 10, { from: 1, to: 4, count: 4, hasMore: true }],
    ['head covering everything', { kind: 'head', count: 10 }, 10, { from: 1, to: 10, count: 10, hasMore: false }],
    ['range in the middle', { kind: 'range', offset: 5, limit: 2 }, 10, { from: 5, to: 6, count: 2, hasMore: true }],
    ['range to the end', { kind: 'range', offset: 9, limit: 5 }, 10, { from: 9, to: 10, count: 2, hasMore: false }],
    [
      'range ending exactly at the end',
      { kind: 'range', offset: 6, limit: 5 },
      10,
      { from: 6, to: 10, count: 5, hasMore: false },
    ],
    [
      'offset past the end',
      { kind: 'range', offset: 11, limit: 5 },
      10,
      { from: 11, to: 10, count: 0, hasMore: false },
    ],
    [
      'offset far past the end',
      { kind: 'range', offset: 500, limit: 5 },
      10,
      { from: 500, to: 10, count: 0, hasMore: false },
    ],
    [
      'range of an empty stream',
      { kind: 'range', offset: 1, limit: 5 },
      0,
      { from: 1, to: 0, count: 0, hasMore: false },
    ],
    [
      'the 500000th line of a million',
      { kind: 'range', offset: 500_000, limit: 1000 },
      1_000_000,
      { from: 500_000, to: 500_999, count: 1000, hasMore: true },
    ],
  ])('%s', (_label, selection, total, expected) => {
    expect(read(selection, total)).toEqual(expected);
  });
});
