import type { WorkbookCellValue, WorkbookColumnType } from '@dagu-mcp/contracts';

/**
 * Cell typing of `workbook.md` "Typing cells" (after Dagu spec 077): what a
 * number format makes of a number, ISO 8601 text of dates and times in the
 * 1900 and 1904 date systems, and the type of one typed cell.
 */

/** What a number format shows a number as. `elapsed` (`[h]:mm`) and plain formats stay numbers. */
export type NumberFormatKind = 'number' | 'date' | 'time' | 'datetime';

/**
 * Classifies a number format by its first section: quoted text, `\x`
 * escapes, `_x` / `*x` padding and `[…]` colour or locale blocks are ignored;
 * an elapsed-time block (`[h]`, `[mm]`, `[ss]`) keeps the number a number
 * (`workbook.md`: `[h]:mm` stays a number). `m` is minutes next to `h` or
 * `s`, else a month.
 */
export function classifyNumberFormat(format: string | undefined): NumberFormatKind {
  if (format === undefined || format === '' || /^general$/i.test(format)) return 'number';
  const section = (format.split(';')[0] ?? '').toLowerCase();
  if (/\[(h+|m+|s+)\]/.test(section)) return 'number';
  const bare = section
    .replace(/"[^"]*"/g, '')
    .replace(/\\./g, '')
    .replace(/[_*]./g, '')
    .replace(/\[[^\]]*\]/g, '');
  const hasTime = /[hs]/.test(bare) || /(am\/pm|a\/p)/.test(bare);
  const withoutMinutes = bare
    .replace(/am\/pm|a\/p/g, '')
    .replace(/h+[^a-z]*m+/g, 'h')
    .replace(/m+([^a-z]*s)/g, '$1');
  const hasDate = /[yd]/.test(withoutMinutes) || /m/.test(withoutMinutes);
  if (hasDate && hasTime) return 'datetime';
  if (hasDate) return 'date';
  if (hasTime) return 'time';
  return 'number';
}

/** Days from the serial-number origin of each date system to 1970-01-01. */
const UNIX_EPOCH_SERIAL = { '1900': 25569, '1904': 24107 } as const;

/** The date system of a workbook (021: `date_system`). */
export type DateSystem = keyof typeof UNIX_EPOCH_SERIAL;

/**
 * A serial number as ISO 8601 text of `kind`, rounded to the second:
 * `2026-10-01`, `15:04:05` or `2026-10-01T14:30:00`.
 */
export function serialToIso(serial: number, kind: Exclude<NumberFormatKind, 'number'>, system: DateSystem): string {
  const ms = Math.round((serial - UNIX_EPOCH_SERIAL[system]) * 86_400) * 1000;
  const iso = new Date(ms).toISOString();
  if (kind === 'date') return iso.slice(0, 10);
  if (kind === 'time') return iso.slice(11, 19);
  return iso.slice(0, 19);
}

/**
 * The serial number of a date ExcelJS made from a date-formatted number
 * (ExcelJS turns every such number into a `Date`, elapsed times included;
 * this undoes it exactly, to the millisecond, in the workbook's date system).
 */
export function dateToSerial(date: Date, system: DateSystem): number {
  return date.getTime() / 86_400_000 + UNIX_EPOCH_SERIAL[system];
}

/** The type of one typed cell, or undefined for null. Dates are told from date-times by their text. */
export function cellTypeOf(value: WorkbookCellValue, kind: NumberFormatKind | 'text' = 'text'): CellType | undefined {
  if (value === null) return undefined;
  if (typeof value === 'boolean') return 'boolean';
  if (typeof value === 'number') return Number.isInteger(value) && Math.abs(value) <= 2 ** 53 ? 'integer' : 'number';
  if (kind === 'date') return 'date';
  if (kind === 'datetime') return 'datetime';
  return 'string';
}

/** A typed cell's own type: a column type, where a `time` cell is text (021 has no time type). */
export type CellType = WorkbookColumnType;

/**
 * The type of a column from the types of its non-null cells (`workbook.md`
 * "The sheet entry"): `boolean` if all are booleans; `integer` if all are
 * integral numbers; `number` if all are numbers; `date` if all are dates;
 * `datetime` if all are dates or date-times with at least one date-time;
 * otherwise (and for a column with no values) `string`.
 */
export function columnTypeOf(counts: Readonly<Partial<Record<CellType, number>>>): WorkbookColumnType {
  const n = (t: CellType): number => counts[t] ?? 0;
  const total = Object.values(counts).reduce((a, b) => a + (b ?? 0), 0);
  if (total === 0) return 'string';
  if (n('boolean') === total) return 'boolean';
  if (n('integer') === total) return 'integer';
  if (n('integer') + n('number') === total) return 'number';
  if (n('date') === total) return 'date';
  if (n('date') + n('datetime') === total) return 'datetime';
  return 'string';
}

/** Whether a cell of type `cell` fits a column of type `column` (an integer is a number, a date a date-time). */
export function fitsColumn(cell: CellType, column: WorkbookColumnType): boolean {
  if (cell === column) return true;
  if (column === 'number') return cell === 'integer';
  if (column === 'datetime') return cell === 'date';
  return false;
}
