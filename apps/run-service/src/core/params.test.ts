import { DaguError } from '@dagu-mcp/contracts';
import type { ParamDef } from '@dagu-mcp/dag-spec';
import { formatParams, mergeParams, parseParamInput, tokenizeParams } from './params';

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (error) {
    if (error instanceof DaguError) return `${error.code}:${error.field ?? ''}`;
    throw error;
  }
  return undefined;
}

describe('params input', () => {
  it('tokenizes a params string like a shell, keeping backticks', () => {
    expect(tokenizeParams('A=1 B="two words" \'x y\' C=`date` D=a\\"b')).toEqual([
      { name: 'A', value: '1' },
      { name: 'B', value: 'two words' },
      { value: 'x y' },
      { name: 'C', value: '`date`' },
      { name: 'D', value: 'a"b' },
    ]);
  });

  it('reads compact JSON objects (036 re-encodes object params)', () => {
    expect(parseParamInput('{"A":"1","N":2,"B":true,"O":{"k":1},"Z":null}')).toEqual([
      { name: 'A', value: '1' },
      { name: 'N', value: '2' },
      { name: 'B', value: 'true' },
      { name: 'O', value: '{"k":1}' },
      { name: 'Z', value: '' },
    ]);
  });

  it('refuses an unterminated quote on field params', () => {
    expect(codeOf(() => tokenizeParams('A="open'))).toBe('invalid_tool_input:params');
  });
});

describe('mergeParams', () => {
  const defs: ParamDef[] = [
    { name: '1', default: 'pos-default' },
    { name: 'FOO', default: 'foo' },
    { name: 'BAR', default: '`echo bar`' },
  ];

  it('overrides by name and by position, appends undeclared ones, marks defaults', () => {
    expect(mergeParams(defs, 'FOO=x newpos EXTRA=1')).toEqual([
      { name: '1', value: 'newpos', fromDefault: false },
      { name: 'FOO', value: 'x', fromDefault: false },
      { name: 'BAR', value: '`echo bar`', fromDefault: true },
      { name: 'EXTRA', value: '1', fromDefault: false },
    ]);
  });

  it('checks typed declarations', () => {
    const typed: ParamDef[] = [
      { name: 'N', default: null, type: 'integer', required: true },
      { name: 'E', default: 'a', enum: ['a', 'b'] },
      { name: 'M', default: '5', type: 'number', minimum: 1, maximum: 10 },
    ];
    expect(codeOf(() => mergeParams(typed, ''))).toBe('invalid_tool_input:params');
    expect(codeOf(() => mergeParams(typed, 'N=x'))).toBe('invalid_tool_input:params');
    expect(codeOf(() => mergeParams(typed, 'N=1 E=c'))).toBe('invalid_tool_input:params');
    expect(codeOf(() => mergeParams(typed, 'N=1 M=11'))).toBe('invalid_tool_input:params');
    expect(mergeParams(typed, 'N=1 E=b M=2').map((p) => p.value)).toEqual(['1', 'b', '2']);
  });

  it('formats the effective params as one string', () => {
    expect(formatParams(mergeParams(defs, 'FOO="a b"'))).toBe('pos-default FOO="a b" BAR="`echo bar`"');
  });
});
