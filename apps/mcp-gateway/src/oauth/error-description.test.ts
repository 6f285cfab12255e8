import { z } from 'zod';
import { readableErrorDescription } from './error-description';

const TokenGrant = z.object({ code: z.string(), code_verifier: z.string(), resource: z.string().url().optional() });

describe('readableErrorDescription', () => {
  test('a zod dump of the SDK becomes one sentence naming each parameter', () => {
    const parsed = TokenGrant.safeParse({ code: 'c', resource: 'not a url' });
    if (parsed.success) throw new Error('expected a failure');
    const text = readableErrorDescription(parsed.error.message);
    expect(text).toBe(
      'The request was refused: the parameter code_verifier is missing; the parameter resource is invalid (invalid URL).',
    );
  });

  test('the String(error) form of the client authentication is read too', () => {
    const parsed = z.object({ client_id: z.string() }).safeParse({ client_id: ['a', 'b'] });
    if (parsed.success) throw new Error('expected a failure');
    expect(readableErrorDescription(String(parsed.error))).toBe(
      'The request was refused: the parameter client_id is invalid (invalid input: expected string, received array).',
    );
  });

  test.each([
    ['Invalid client_id', 'Invalid client_id.'],
    ['unknown or expired authorization code', 'Unknown or expired authorization code.'],
    ['The code is used up.', 'The code is used up.'],
    ['[not json', '[not json.'],
  ])('other text is sentence-cased: %s', (input, output) => {
    expect(readableErrorDescription(input)).toBe(output);
  });

  test('one line, bounded', () => {
    const text = readableErrorDescription(`a\n${'x'.repeat(1000)}`);
    expect(text).not.toContain('\n');
    expect(text.length).toBeLessThanOrEqual(300);
  });
});
