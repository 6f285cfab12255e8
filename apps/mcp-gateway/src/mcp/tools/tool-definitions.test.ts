import { CHANGE_INPUT_FIELDS } from './change/change-input';
import { CHANGE_TYPES } from './change/change-types';
import { TOOL_DEFINITIONS } from './tool-definitions';

describe('tool input schemas (Dagu spec 022b §Input)', () => {
  test.each(TOOL_DEFINITIONS.map((tool) => [tool.name, tool] as const))(
    '%s publishes a plain object: no oneOf/anyOf/allOf at the root',
    (_name, tool) => {
      const schema: Record<string, unknown> = { ...tool.inputSchema };
      expect(schema.type).toBe('object');
      for (const combinator of ['oneOf', 'anyOf', 'allOf', 'not', 'if', 'then', 'else']) {
        expect(Object.keys(schema)).not.toContain(combinator);
      }
    },
  );

  test('dagu_change is one flat object of string fields, type an enum of the eight change types', () => {
    const change = TOOL_DEFINITIONS.find((tool) => tool.name === 'dagu_change');
    const schema = change?.inputSchema;
    expect(schema?.additionalProperties).toBe(false);
    const properties = schema?.properties ?? {};
    expect(Object.keys(properties)).toEqual([...CHANGE_INPUT_FIELDS]);
    for (const value of Object.values(properties)) expect(value).toMatchObject({ type: 'string' });
    expect(properties.type).toMatchObject({ enum: [...CHANGE_TYPES] });
  });
});
