import { parseOutputFile, readStepOutput, OutputCapture } from './step-outputs';
import { selectJsonPath } from './json-path';

describe('parseOutputFile (Dagu spec 012)', () => {
  it('reads single-line and heredoc records of declared names', () => {
    const content = 'image_tag=v1.2.3\nempty=\nmeta<<EOF\n{"a": 1}\nline 2\nEOF\n\n';
    expect(parseOutputFile(content, ['image_tag', 'empty', 'meta'])).toEqual({
      ok: true,
      value: { image_tag: 'v1.2.3', empty: '', meta: '{"a": 1}\nline 2' },
    });
  });

  it.each([
    ['a=1\n', [], /not declared/],
    ['a=1\na=2\n', ['a'], /written twice/],
    ['', ['a'], /not written.*a/],
    ['garbage\n', ['a'], /malformed/],
    ['a<<END\nx\n', ['a'], /unclosed/],
  ])('fails the try for %j', (content, declared, error) => {
    const result = parseOutputFile(content, declared);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error).toMatch(error);
  });
});

describe('readStepOutput', () => {
  it('a variable is the trimmed stdout', () => {
    expect(readStepOutput({ kind: 'variable', name: 'OUT' }, '  hi \n', '')).toEqual({
      ok: true,
      value: { variable: { name: 'OUT', value: 'hi' } },
    });
  });

  it('fields decode JSON and select by path', () => {
    const output = {
      kind: 'fields' as const,
      fields: [
        { name: 'title', from: 'stdout' as const, decode: 'json' as const, select: '.title' },
        { name: 'raw', from: 'stderr' as const },
      ],
    };
    expect(readStepOutput(output, '{"title": "t"}', 'warn')).toEqual({
      ok: true,
      value: { fields: { title: 't', raw: 'warn' } },
    });
    expect(readStepOutput(output, 'not json', '').ok).toBe(false);
    expect(
      readStepOutput(
        { kind: 'fields', fields: [{ name: 'x', from: 'stdout', decode: 'json', select: '.nope' }] },
        '{}',
        '',
      ).ok,
    ).toBe(false);
  });
});

describe('selectJsonPath and OutputCapture', () => {
  it('walks keys and indexes', () => {
    expect(selectJsonPath({ a: [{ b: 1 }] }, '.a[0].b')).toEqual({ found: true, value: 1 });
    expect(selectJsonPath({ a: 1 }, 'a')).toEqual({ found: true, value: 1 });
    expect(selectJsonPath({ 'x y': 2 }, '["x y"]')).toEqual({ found: true, value: 2 });
    expect(selectJsonPath({ a: 1 }, '.a.b')).toEqual({ found: false });
    expect(selectJsonPath([1], '[3]')).toEqual({ found: false });
  });

  it('joins captured lines', () => {
    const capture = new OutputCapture();
    capture.append('a');
    capture.append('b');
    expect(capture.text()).toBe('a\nb');
  });
});
