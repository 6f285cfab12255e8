/**
 * `params` in its three forms (dagu-model.md §3) → ordered `{name, default}`.
 */
import { parseDagSpec, type ParamDef } from './index';
import { tokenizeParamString } from './params.parser';

const STEP = 'steps:\n  - {name: a, run: x}\n';

function parse(params: string): { params?: ParamDef[]; errors: string[] } {
  const result = parseDagSpec(`params: ${params}\n${STEP}`, { name: 't' });
  return { params: result.dag?.params, errors: result.errors };
}

describe('params', () => {
  it.each<[string, string, ParamDef[]]>([
    [
      'string form',
      '"A=1 B=2"',
      [
        { name: 'A', default: '1' },
        { name: 'B', default: '2' },
      ],
    ],
    [
      'quoted values',
      `'A="two words" B=''x y'' C=a"b c"d'`,
      [
        { name: 'A', default: 'two words' },
        { name: 'B', default: 'x y' },
        { name: 'C', default: 'ab cd' },
      ],
    ],
    ['escaped quote', `'A="say \\"hi\\""'`, [{ name: 'A', default: 'say "hi"' }]],
    ['backticks kept', '"D=`date +%F`"', [{ name: 'D', default: '`date +%F`' }]],
    [
      'positional',
      '"foo bar A=1 baz"',
      [
        { name: '1', default: 'foo' },
        { name: '2', default: 'bar' },
        { name: 'A', default: '1' },
        { name: '3', default: 'baz' },
      ],
    ],
    [
      'empty value',
      '"A= B=1"',
      [
        { name: 'A', default: '' },
        { name: 'B', default: '1' },
      ],
    ],
    [
      'list of one-entry maps',
      '[{A: 1}, {B: true}]',
      [
        { name: 'A', default: '1' },
        { name: 'B', default: 'true' },
      ],
    ],
    [
      'list of strings',
      '["A=1", "pos"]',
      [
        { name: 'A', default: '1' },
        { name: '1', default: 'pos' },
      ],
    ],
    [
      'map',
      '{X: 1, Y: null}',
      [
        { name: 'X', default: '1' },
        { name: 'Y', default: '' },
      ],
    ],
    [
      'typed declaration',
      '[{name: N, type: integer, default: 3, minimum: 1, required: true}, {name: M}]',
      [
        { name: 'N', default: '3', type: 'integer', minimum: 1, required: true },
        { name: 'M', default: null },
      ],
    ],
  ])('%s', (_label, params, expected) => {
    const result = parse(params);
    expect(result.errors).toEqual([]);
    expect(result.params).toEqual(expected);
  });

  it.each<[string, string, string[]]>([
    ['unterminated quote', `'A="x'`, ['field \'params\': unterminated " quote (value: A="x)']],
    ['duplicate names', '"A=1 A=2"', ["field 'params': duplicate param name (value: A)"]],
    ['non-scalar default', '{A: [1]}', ["field 'params.A': param default must be a scalar (value: [1])"]],
    [
      'bad item',
      '[[1]]',
      ["field 'params[0]': must be a string, a one-entry map or a param declaration with a name (value: [1])"],
    ],
    [
      'bad declaration type',
      '[{name: N, type: date}]',
      ["field 'params[0].type': must be one of string, integer, number, boolean (value: date)"],
    ],
    ['unknown declaration key', '[{name: N, widget: x}]', ["field 'params[0].widget': unknown field"]],
    ['bad name in map', '{"a-b": 1}', ["field 'params': invalid param name (value: a-b)"]],
    ['number', '5', ["field 'params': must be a string, a list or a map (value: 5)"]],
  ])('%s', (_label, params, expected) => {
    expect(parse(params).errors).toEqual(expected);
  });

  it('tokenizes like a shell, without expanding anything', () => {
    expect(tokenizeParamString('  A=$HOME  "b c"  ')).toEqual([{ name: 'A', value: '$HOME' }, { value: 'b c' }]);
    expect(tokenizeParamString("A='x")).toBe("unterminated ' quote");
  });
});
