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

  it('overrides by name and by position, marks defaults', () => {
    expect(mergeParams(defs, 'FOO=x newpos')).toEqual([
      { name: '1', value: 'newpos', fromDefault: false },
      { name: 'FOO', value: 'x', fromDefault: false },
      { name: 'BAR', value: '`echo bar`', fromDefault: true },
    ]);
  });

  it('a DAG that declares params refuses every unknown name, naming them all (dagu-model §3)', () => {
    let caught: unknown;
    try {
      mergeParams(defs, 'FOO=x EXTRA=1 p1 p2 MORE=2');
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(DaguError);
    const err = caught instanceof DaguError ? caught : undefined;
    expect(err?.field).toBe('params');
    expect(err?.details).toMatchObject({ unknown: ['EXTRA', '2', 'MORE'] });
    // A positional value is named by its value, not as "param 2" alone (docs/decisions.md "Messages a newcomer meets").
    expect(err?.message).toContain('EXTRA, the positional value "p2" (param 2), MORE');
  });

  it('a positional value for a DAG of named params says which value and how to name it', () => {
    const named: ParamDef[] = [{ name: 'ORDER', default: null, required: true }];
    expect(() => mergeParams(named, 'ord-9')).toThrow(
      'Unknown param: the positional value "ord-9" (param 1). This DAG declares only ORDER. Give values by name, e.g. ORDER=ord-9.',
    );
  });

  it('a DAG that declares none accepts any name, as Dagu does, but no reserved name', () => {
    expect(mergeParams([], 'EXTRA=1 pos').map((p) => p.name)).toEqual(['EXTRA', '1']);
    for (const name of [
      'PATH',
      'HOME',
      'IFS',
      'BASH_ENV',
      'LD_PRELOAD',
      'DYLD_X',
      'PYTHONPATH',
      'PERL5LIB',
      'NODE_OPTIONS',
      'DAG_RUN_ID',
      'DAGU_OUTPUT_FILE',
    ]) {
      expect(codeOf(() => mergeParams([], `${name}=x`))).toBe('invalid_tool_input:params');
      expect(codeOf(() => mergeParams([], JSON.stringify({ [name]: 'x' })))).toBe('invalid_tool_input:params');
    }
    expect(mergeParams([], 'path=x')[0]?.name).toBe('path');
  });

  it('checks typed declarations, naming the refused param in field', () => {
    const typed: ParamDef[] = [
      { name: 'N', default: null, type: 'integer', required: true },
      { name: 'E', default: 'a', enum: ['a', 'b'] },
      { name: 'M', default: '5', type: 'number', minimum: 1, maximum: 10 },
    ];
    expect(codeOf(() => mergeParams(typed, ''))).toBe('invalid_tool_input:params.N');
    expect(codeOf(() => mergeParams(typed, 'N=x'))).toBe('invalid_tool_input:params.N');
    expect(codeOf(() => mergeParams(typed, '{"N": true}'))).toBe('invalid_tool_input:params.N');
    expect(codeOf(() => mergeParams(typed, 'N=1 E=c'))).toBe('invalid_tool_input:params.E');
    expect(codeOf(() => mergeParams(typed, 'N=1 M=11'))).toBe('invalid_tool_input:params.M');
    expect(() => mergeParams(typed, 'N=1 E=c')).toThrow('The param E must be one of a, b, not "c".');
    expect(mergeParams(typed, 'N=1 E=b M=2').map((p) => p.value)).toEqual(['1', 'b', '2']);
  });

  it('formats the effective params as one string', () => {
    expect(formatParams(mergeParams(defs, 'FOO="a b"'))).toBe('pos-default FOO="a b" BAR="`echo bar`"');
  });
});
