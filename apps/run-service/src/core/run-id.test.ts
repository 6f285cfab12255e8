import { formatIdTime, generateRunId, isValidDagRunId } from './run-id';

describe('generateRunId', () => {
  it('starts with the UTC time in fixed width and ends with 10 random base32 chars', () => {
    const id = generateRunId(new Date('2026-11-29T12:55:00.123Z'), (n) => Buffer.alloc(n, 1));
    expect(id).toBe('20261129T125500123Z-1111111111');
  });

  it('is valid for the run-id pattern and at most 64 chars', () => {
    for (let i = 0; i < 200; i++) {
      const id = generateRunId();
      expect(isValidDagRunId(id)).toBe(true);
      expect(id.length).toBe(30);
    }
  });

  it('sorts by creation time as a plain string', () => {
    const times = [
      '2026-01-01T00:00:00.000Z',
      '2026-01-01T00:00:00.001Z',
      '2026-01-01T00:00:01.000Z',
      '2027-01-01T00:00:00.000Z',
    ];
    const ids = times.map((t) => generateRunId(new Date(t)));
    expect([...ids].reverse().sort()).toEqual(ids);
  });

  it('is unique over many draws', () => {
    const at = new Date();
    const ids = new Set(Array.from({ length: 10_000 }, () => generateRunId(at)));
    expect(ids.size).toBe(10_000);
  });

  it('pads every time field', () => {
    expect(formatIdTime(new Date('0999-02-03T04:05:06.007Z'))).toBe('09990203T040506007Z');
  });
});

describe('isValidDagRunId', () => {
  it.each([
    ['abc-DEF_123', true],
    ['a'.repeat(64), true],
    ['a'.repeat(65), false],
    ['a b', false],
    ['a/b', false],
    ['', false],
  ])('%s → %s', (id, valid) => {
    expect(isValidDagRunId(id)).toBe(valid);
  });
});
