import { parseLaneEntry } from './handoff-lane';

describe('parseLaneEntry', () => {
  it('reads id, name, timestamp and opts, and keeps every later newline in the data', () => {
    const entry = ['job-1', 'echo', '1700000000000', '{"attempts":1}', '{"text":"a\nb"}'].join('\n');
    expect(parseLaneEntry(entry, 'w1')).toEqual({
      id: 'job-1',
      name: 'echo',
      timestamp: 1_700_000_000_000,
      opts: '{"attempts":1}',
      data: '{"text":"a\nb"}',
      token: 'w1:job-1',
    });
  });

  it.each([
    ['too few fields', 'job-1\necho\n1700000000000'],
    ['an empty id', '\necho\n1\n{}\n{}'],
    ['a timestamp that is not a number', 'job-1\necho\nsoon\n{}\n{}'],
    ['the stop entry', ''],
  ])('refuses %s', (_label, entry) => {
    expect(parseLaneEntry(entry, 'w1')).toBeUndefined();
  });
});
