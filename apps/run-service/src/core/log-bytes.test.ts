import { boundLines } from './log-bytes';

/** The byte bound of a log read. */
describe('boundLines', () => {
  it('keeps every line that fits, counting the joining newlines', () => {
    expect(boundLines(['ab', 'cd'], 5, false)).toEqual({ lines: ['ab', 'cd'], truncated: false });
    expect(boundLines(['ab', 'cd'], 4, false)).toEqual({ lines: ['ab', 'c'], truncated: true });
  });

  it('keeps the newest lines of a tail, cutting the oldest from its start', () => {
    expect(boundLines(['old-line', 'mid', 'new'], 9, true)).toEqual({ lines: ['e', 'mid', 'new'], truncated: true });
  });

  it('never splits a character', () => {
    expect(boundLines(['ééé'], 5, false)).toEqual({ lines: ['éé'], truncated: true });
    expect(boundLines(['ééé'], 3, true)).toEqual({ lines: ['é'], truncated: true });
  });

  it('cuts one huge line to the bound', () => {
    const { lines, truncated } = boundLines(['x'.repeat(3_000_000)], 1024, false);
    expect([lines[0]?.length, truncated]).toEqual([1024, true]);
  });
});
