import { paramHeaderMismatch, paramHeadersOf, paramHeaderText } from './param-headers';

describe('x-mcp-header parameters (SEP-2243)', () => {
  const schema = {
    type: 'object',
    properties: {
      name: { type: 'string', 'x-mcp-header': 'Name' },
      count: { type: 'integer', 'x-mcp-header': 'Count' },
      options: { type: 'object', properties: { dry: { type: 'boolean', 'x-mcp-header': 'Dry' } } },
      list: { type: 'array', items: { type: 'string', 'x-mcp-header': 'Ignored' } },
      tags: { type: 'object', 'x-mcp-header': 'NotPrimitive' },
    },
  };

  it('finds annotations through properties only, on primitive types', () => {
    expect(paramHeadersOf(schema)).toEqual([
      { name: 'Name', path: ['name'], type: 'string' },
      { name: 'Count', path: ['count'], type: 'integer' },
      { name: 'Dry', path: ['options', 'dry'], type: 'boolean' },
    ]);
  });

  it('reads literal and Base64-wrapped values, refusing bad Base64', () => {
    expect(paramHeaderText('  plain ')).toBe('plain');
    expect(paramHeaderText(`=?base64?${Buffer.from('dåg').toString('base64')}?=`)).toBe('dåg');
    expect(paramHeaderText('=?base64?SGVsbG8?=')).toBeUndefined();
    expect(paramHeaderText('=?base64?SGVs!!!bG8=?=')).toBeUndefined();
    expect(paramHeaderText('=?base64?SGVsbG8=')).toBe('=?base64?SGVsbG8=');
  });

  it('compares headers with the body: strings exactly, numbers numerically, booleans as words', () => {
    const declared = paramHeadersOf(schema);
    const headers = (h: Record<string, string>) => (name: string) => h[name];
    const args = { name: 'etl', count: 3, options: { dry: true } };
    const all = { 'mcp-param-name': 'etl', 'mcp-param-count': '3.0', 'mcp-param-dry': 'true' };
    expect(paramHeaderMismatch(headers(all), declared, args)).toBeUndefined();
    expect(paramHeaderMismatch(headers({ ...all, 'mcp-param-count': '4' }), declared, args)).toMatch(/Count/);
    expect(paramHeaderMismatch(headers({ ...all, 'mcp-param-dry': 'True' }), declared, args)).toMatch(/Dry/);
    expect(paramHeaderMismatch(headers({ 'mcp-param-count': '3', 'mcp-param-dry': 'true' }), declared, args)).toBe(
      'Header mismatch: Mcp-Param-Name must carry arguments.name.',
    );
    expect(paramHeaderMismatch(headers({ 'mcp-param-name': 'x' }), declared, {})).toBe(
      'Header mismatch: Mcp-Param-Name is sent but arguments.name is absent.',
    );
    expect(paramHeaderMismatch(headers({}), declared, { name: null })).toBeUndefined();
  });
});
