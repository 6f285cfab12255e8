import type { z } from 'zod';
import { requireReadRole } from './role-check';
import type { Principal, Role } from './principal';
import { firstErrorPath } from '../test-fixtures/first-error-path';
import { hasWorkbookExtension, WorkbookModelSchema, WorkbookReadRequestSchema } from './workbook';

/** The path of the first issue, dotted (`''` for the whole value), or `null` when the value is valid. */
const sheet = {
  name: 'S',
  used_range: 'S!A1:B2',
  range: 'S!A1:B2',
  header_row: 1,
  headers: ['a', 'b'],
  types: { a: 'string', b: 'integer' },
  row_count: 1,
  columns: [{ name: 'a', type: 'string', filled: 1, blank: 0, distinct: 1, values: ['x'] }],
  tables: [],
  sample: [{ a: 'x', b: 1, _row: 2 }],
};
const model = { path: '/w/a.xlsx', date_system: '1900', sheets: [sheet], named_ranges: [], warnings: [] };

describe('workbook contracts (021 Workbook, workbook.md)', () => {
  const cases: Array<[string, z.ZodType, unknown, string | null]> = [
    ['request: path only', WorkbookReadRequestSchema, { path: 'a.xlsx' }, null],
    ['request: with a password of spaces', WorkbookReadRequestSchema, { path: 'a.xlsx', password: '  ' }, null],
    ['request: empty path', WorkbookReadRequestSchema, { path: '' }, 'path'],
    ['request: empty password', WorkbookReadRequestSchema, { path: 'a.xlsx', password: '' }, 'password'],
    ['request: unknown field', WorkbookReadRequestSchema, { path: 'a.xlsx', name: 'x' }, ''],
    ['model: valid', WorkbookModelSchema, model, null],
    ['model: date system', WorkbookModelSchema, { ...model, date_system: '2000' }, 'date_system'],
    [
      'model: hidden is true or absent',
      WorkbookModelSchema,
      { ...model, sheets: [{ ...sheet, hidden: false }] },
      'sheets.0.hidden',
    ],
    [
      'model: column type',
      WorkbookModelSchema,
      { ...model, sheets: [{ ...sheet, types: { a: 'time' } }] },
      'sheets.0.types.a',
    ],
    [
      'model: at most five samples',
      WorkbookModelSchema,
      { ...model, sheets: [{ ...sheet, sample: Array(6).fill({ _row: 2 }) }] },
      'sheets.0.sample',
    ],
    [
      'model: named range scope',
      WorkbookModelSchema,
      { ...model, named_ranges: [{ name: 'n', refers_to: 'S!A1' }] },
      'named_ranges.0.scope',
    ],
  ];
  it.each(cases)('%s', (_label, schema, value, path) => {
    expect(firstErrorPath(schema, value)).toBe(path);
  });

  it.each([
    ['a.xlsx', true],
    ['dir/B.XLSM', true],
    ['a.xls', false],
    ['a.csv', false],
    ['a.xlsx.bak', false],
  ])('%s is a workbook path: %s', (path, ok) => {
    expect(hasWorkbookExtension(path)).toBe(ok);
  });
});

describe('requireReadRole (workbook.md: reading a workbook needs developer)', () => {
  const as = (role: Role): Principal => ({ id: `u-${role}`, subject: role, role, credentialType: 'api_key' });
  it.each([
    ['viewer', false],
    ['operator', false],
    ['developer', true],
    ['manager', true],
    ['admin', true],
  ] as const)('%s: allowed %s', (role, allowed) => {
    const check = () => requireReadRole(as(role), 'run.workbook');
    if (allowed) expect(check).not.toThrow();
    else expect(check).toThrow(expect.objectContaining({ code: 'unauthorized' }) as Error);
  });
});
