import { classifyNumberFormat, columnTypeOf, fitsColumn, serialToIso } from './cell-typing';

describe('number formats (workbook.md "Typing cells")', () => {
  test.each([
    [undefined, 'number'],
    ['General', 'number'],
    ['0.00', 'number'],
    ['#,##0 "m"', 'number'],
    ['[h]:mm', 'number'],
    ['[mm]:ss', 'number'],
    ['yyyy-mm-dd', 'date'],
    ['mm-dd-yy', 'date'],
    ['d-mmm', 'date'],
    ['[$-409]mmmm d, yyyy', 'date'],
    ['hh:mm:ss', 'time'],
    ['h:mm AM/PM', 'time'],
    ['mm:ss', 'time'],
    ['yyyy-mm-dd hh:mm:ss', 'datetime'],
    ['m/d/yy h:mm', 'datetime'],
    ['"day" 0', 'number'],
  ] as const)('%p → %s', (format, kind) => {
    expect(classifyNumberFormat(format)).toBe(kind);
  });
});

describe('serial numbers in both date systems', () => {
  test.each([
    [46296, 'date', '1900', '2026-10-01'],
    [44834, 'date', '1904', '2026-10-01'],
    [46296.604166666664, 'datetime', '1900', '2026-10-01T14:30:00'],
    [0.6278356481481482, 'time', '1900', '15:04:05'],
  ] as const)('%d as %s in %s → %s', (serial, kind, system, text) => {
    expect(serialToIso(serial, kind, system)).toBe(text);
  });
});

describe('column types (workbook.md "The sheet entry")', () => {
  test.each([
    [{}, 'string'],
    [{ boolean: 2 }, 'boolean'],
    [{ integer: 3 }, 'integer'],
    [{ integer: 3, number: 1 }, 'number'],
    [{ date: 2 }, 'date'],
    [{ date: 2, datetime: 1 }, 'datetime'],
    [{ integer: 9, string: 1 }, 'string'],
    [{ boolean: 1, integer: 1 }, 'string'],
  ] as const)('%j → %s', (counts, type) => {
    expect(columnTypeOf(counts)).toBe(type);
  });

  test('an integer fits a number column and a date a datetime one; nothing else fits another type', () => {
    expect(fitsColumn('integer', 'number')).toBe(true);
    expect(fitsColumn('date', 'datetime')).toBe(true);
    expect(fitsColumn('number', 'integer')).toBe(false);
    expect(fitsColumn('integer', 'string')).toBe(false);
  });
});
