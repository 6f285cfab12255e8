import { LineSplitter } from './line-splitter';

function split(chunks: Array<Buffer | string>, max?: number): string[] {
  const lines: string[] = [];
  const splitter = new LineSplitter((line) => lines.push(line), max);
  for (const chunk of chunks) splitter.push(chunk);
  splitter.end();
  return lines;
}

describe('LineSplitter', () => {
  it('splits on newlines across chunks and keeps the last unterminated line', () => {
    expect(split(['a\nb', 'c\n', 'd'])).toEqual(['a', 'bc', 'd']);
  });

  it('keeps empty lines and drops a trailing CR', () => {
    expect(split(['x\r\n\n\ny\n'])).toEqual(['x', '', '', 'y']);
  });

  it('decodes a UTF-8 character cut between chunks', () => {
    const bytes = Buffer.from('é\n', 'utf8');
    expect(split([bytes.subarray(0, 1), bytes.subarray(1)])).toEqual(['é']);
  });

  it('drops NUL characters', () => {
    expect(split(['a\u0000b\n'])).toEqual(['ab']);
  });

  it('cuts an overlong line into pieces', () => {
    expect(split(['abcdefg\nhi'], 3)).toEqual(['abc', 'def', 'g', 'hi']);
  });

  it('emits nothing for an empty stream', () => {
    expect(split([])).toEqual([]);
  });
});
