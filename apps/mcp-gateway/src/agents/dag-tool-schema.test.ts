import { dagToolInputSchema, dagToolParams, type ParamDef } from './dag-tool-schema';

const PARAMS: ParamDef[] = [
  { name: 'ORDER', default: null, required: true },
  { name: 'COUNT', default: '2', type: 'integer', minimum: 1, maximum: 5 },
  { name: 'RATE', default: 'x', type: 'number' },
  { name: 'DRY', default: 'false', type: 'boolean' },
  { name: 'LEVEL', default: '1', type: 'integer', enum: ['1', '2'] },
];

describe('DAG tools: input schema and arguments from declared params', () => {
  it('is flat: types, typed defaults (an unreadable one stays text), enums, bounds, required', () => {
    expect(dagToolInputSchema(PARAMS)).toEqual({
      type: 'object',
      properties: {
        ORDER: { type: 'string' },
        COUNT: { type: 'integer', default: 2, minimum: 1, maximum: 5 },
        RATE: { type: 'number', default: 'x' },
        DRY: { type: 'boolean', default: false },
        LEVEL: { type: 'integer', enum: [1, 2], default: 1 },
      },
      required: ['ORDER'],
      additionalProperties: false,
    });
    expect(dagToolInputSchema([])).toEqual({ type: 'object', properties: {}, additionalProperties: false });
  });

  it('turns valid arguments into the run params, as text', () => {
    expect(dagToolParams({ ORDER: 'A', COUNT: 3, DRY: true, LEVEL: 2 }, PARAMS)).toEqual({
      ORDER: 'A',
      COUNT: '3',
      DRY: 'true',
      LEVEL: '2',
    });
  });

  it.each([
    [[], 'arguments'],
    [{ COUNT: 1 }, 'ORDER'],
    [{ ORDER: 'A', COUNT: 1.5 }, 'COUNT'],
    [{ ORDER: 'A', COUNT: 9 }, 'COUNT'],
    [{ ORDER: 'A', RATE: '1' }, 'RATE'],
    [{ ORDER: 'A', LEVEL: 3 }, 'LEVEL'],
    [{ ORDER: 'A', OTHER: 'x' }, 'OTHER'],
  ])('refuses %j on %s', (args, field) => {
    expect(() => dagToolParams(args, PARAMS)).toThrow(
      expect.objectContaining({ code: 'invalid_tool_input', field }) as Error,
    );
  });
});
