import type { TypedCell } from './cell-value';
import type { GridRow } from './sheet-grid';
import { describeSheet, MAX_ERROR_WARNINGS } from './sheet-model';

const text = (value: string): TypedCell => ({ value, type: 'string' });
const int = (value: number): TypedCell => ({ value, type: 'integer' });
const error: TypedCell = { value: null, type: undefined, error: '#DIV/0!' };
const row = (n: number, cells: Array<[number, TypedCell]>, hidden = false): GridRow => ({
  row: n,
  hidden,
  cells: new Map(cells),
});
const facts = { name: 'S', hidden: false, tables: [] };

describe('describeSheet (workbook.md "Finding the table of a sheet")', () => {
  test('a one-column sheet: its first text row above data is the header (workbook.md, Dagu 077)', () => {
    const data = Array.from({ length: 5001 }, (_, i) => row(i + 3, [[2, int(i + 1)]]));
    const { sheet, warnings } = describeSheet(facts, [row(2, [[2, text('n')]]), ...data]);
    expect(sheet).toMatchObject({ range: 'S!B2:B5003', header_row: 2, headers: ['n'], types: { n: 'integer' } });
    expect(sheet.row_count).toBe(5001);
    expect(sheet.sample?.[0]).toEqual({ n: 1, _row: 3 });
    expect(warnings).toEqual([]);
  });

  test('a one-column sheet whose first row is a number, or a lone text row: no header', () => {
    expect(describeSheet(facts, [row(1, [[1, int(7)]]), row(2, [[1, int(1)]])]).sheet.header_row).toBe(0);
    expect(describeSheet(facts, [row(1, [[1, text('n')]])]).sheet.header_row).toBe(0);
  });

  test('a sheet with values but no row of two and no text header: no header, not profiled, one warning', () => {
    const { sheet, warnings } = describeSheet(facts, [row(2, [[2, int(5)]]), row(3, [[2, int(1)]])]);
    expect(sheet).toEqual({
      name: 'S',
      used_range: 'S!B2:B3',
      range: '',
      header_row: 0,
      headers: [],
      types: {},
      row_count: 0,
      columns: [],
      tables: [],
    });
    expect(warnings).toEqual(['S: no header row (no row has two or more values); not profiled']);
  });

  test('a renamed duplicate skips a suffix a real header already has', () => {
    const header = row(1, [
      [1, text('A')],
      [2, text('A_2')],
      [3, text('A')],
    ]);
    const { sheet, warnings } = describeSheet(facts, [header, row(2, [[1, int(1)]])]);
    expect(sheet.headers).toEqual(['A', 'A_2', 'A_3']);
    expect(warnings).toEqual(['S: duplicate header "A" renamed A_3']);
  });

  test(`error cells: ${MAX_ERROR_WARNINGS} warnings, then one line counting the rest; an error-only row is no data row`, () => {
    const rows = [
      row(1, [
        [1, text('k')],
        [2, text('v')],
      ]),
    ];
    for (let r = 2; r <= 61; r += 1)
      rows.push(
        row(
          r,
          [
            [1, int(r)],
            [2, error],
          ],
          r % 2 === 0,
        ),
      );
    rows.push(row(62, [[2, error]]));
    const { sheet, warnings } = describeSheet(facts, rows);
    expect(sheet.row_count).toBe(60);
    expect(sheet.hidden_rows).toBe(30);
    expect(sheet.range).toBe('S!A1:B61');
    expect(sheet.columns[1]).toEqual({ name: 'v', type: 'string', filled: 0, blank: 60, distinct: 0 });
    expect(warnings).toHaveLength(MAX_ERROR_WARNINGS + 1);
    expect(warnings[0]).toBe('S!B2: error cell #DIV/0!');
    expect(warnings[MAX_ERROR_WARNINGS]).toBe('S: 10 more error cells not listed');
  });

  test('the profile cap counts the rows read; row_count and hidden_rows stay exact', () => {
    const rows = [
      row(1, [
        [1, text('n')],
        [2, text('m')],
      ]),
    ];
    for (let r = 2; r <= 11; r += 1) rows.push(row(r, [[1, int(r)]], r > 9));
    const { sheet } = describeSheet({ ...facts, profileRowCap: 4 }, rows);
    expect(sheet).toMatchObject({ row_count: 10, hidden_rows: 2, profile_truncated: true });
    expect(sheet.columns[0]).toMatchObject({ filled: 4, blank: 0, min: 2, max: 5 });
    expect(sheet.columns[1]).toEqual({ name: 'm', type: 'string', filled: 0, blank: 4, distinct: 0 });
  });
});
