import type { z } from 'zod';
import { firstErrorPath } from '../test-fixtures/first-error-path';
import { DaguError, ErrorCodeSchema, isTransientCode, ServiceErrorSchema, type ErrorCode } from './errors';

/** The path of the first issue, dotted (`''` for the whole value), or `null` when the value is valid. */
describe('error contracts (020/021/022/036 error objects, dagu-model §10)', () => {
  const cases: Array<[string, z.ZodType, unknown, string | null]> = [
    ['code: internal_error', ErrorCodeSchema, 'internal_error', null],
    ['code: rate_limited (REST only)', ErrorCodeSchema, 'rate_limited', null],
    ['code: unknown', ErrorCodeSchema, 'not_found', ''],
    ['code: upper case', ErrorCodeSchema, 'INTERNAL_ERROR', ''],
    ['error: code and message', ServiceErrorSchema, { code: 'conflict', message: 'Taken.' }, null],
    [
      'error: field and details',
      ServiceErrorSchema,
      { code: 'invalid_tool_input', message: 'm', field: 'name', details: { issues: [] } },
      null,
    ],
    [
      'error: details.requestId',
      ServiceErrorSchema,
      { code: 'internal_error', message: 'Internal error.', details: { requestId: 'r1' } },
      null,
    ],
    ['error: unknown code', ServiceErrorSchema, { code: 'oops', message: 'm' }, 'code'],
    ['error: missing message', ServiceErrorSchema, { code: 'conflict' }, 'message'],
    ['error: field not a string', ServiceErrorSchema, { code: 'conflict', message: 'm', field: 3 }, 'field'],
    ['error: details an array', ServiceErrorSchema, { code: 'conflict', message: 'm', details: ['x'] }, 'details'],
  ];

  test.each(cases)('%s', (_name, schema, value, path) => {
    expect(firstErrorPath(schema, value)).toBe(path);
  });

  test('DaguError.toServiceError carries optional keys only when set, and validates', () => {
    const bare = new DaguError('resource_not_found', 'No DAG x.');
    expect(bare.toServiceError()).toEqual({ code: 'resource_not_found', message: 'No DAG x.' });
    const full = new DaguError('invalid_tool_input', 'Bad name.', { field: 'name', details: { didYouMean: ['y'] } });
    expect(full.toServiceError()).toEqual({
      code: 'invalid_tool_input',
      message: 'Bad name.',
      field: 'name',
      details: { didYouMean: ['y'] },
    });
    expect(ServiceErrorSchema.parse(full.toServiceError())).toEqual(full.toServiceError());
    expect(full).toBeInstanceOf(Error);
    expect(full.name).toBe('DaguError');
  });

  test.each(ErrorCodeSchema.options.map((code): [ErrorCode, boolean] => [code, code === 'resource_unavailable']))(
    'isTransientCode(%p) is %p (only an outage is retried)',
    (code, transient) => {
      expect(isTransientCode(code)).toBe(transient);
    },
  );
});
