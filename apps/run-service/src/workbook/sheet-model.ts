import type { WorkbookCellValue, WorkbookSheet } from '@dagu-mcp/contracts';
import { textOfValue, type TypedCell } from './cell-value';
import { profileColumn, type ColumnCells } from './column-profile';
import { columnLetter, rangeText, type GridRow } from './sheet-grid';

/** The profile reads at most this many data rows of a sheet (`workbook.md`). */
export const PROFILE_ROW_CAP = 10_000;
/** Sample rows per sheet (021: up to five). */
export const SAMPLE_ROWS = 5;
/**
 * Error-cell warnings listed per sheet; the rest are counted in one more
 * warning, so a column of 10,000 `#N/A` cannot swell the reply
 * (docs/decisions.md "Workbook reads").
 */
export const MAX_ERROR_WARNINGS = 50;

/** What {@link describeSheet} is given besides the grid. */
export interface SheetFacts {
  readonly name: string;
  /** Hidden or very hidden. */
  readonly hidden: boolean;
  /** The sheet's defined tables, ranges as `Sheet!A1:B3`. */
  readonly tables: ReadonlyArray<{ name: string; range: string }>;
  /** Data rows the profile reads; default {@link PROFILE_ROW_CAP}. */
  readonly profileRowCap?: number;
}

/**
 * One sheet entry of the workbook model (Dagu spec 021 Workbook,
 * `workbook.md` "Finding the table of a sheet" and "The sheet entry"): the
 * header is the first row with two or more values (on a one-column sheet, the
 * first valued row when it is text above a data row); the table block runs from
 * it to the last row holding a value, over the columns holding values in
 * those rows. Empty and repeated headers are renamed (with warnings); data
 * rows are the rows below the header holding a value.
 *
 * @returns the entry and its warnings, each prefixed with the sheet name
 */
export function describeSheet(
  facts: SheetFacts,
  grid: readonly GridRow[],
): { sheet: WorkbookSheet; warnings: string[] } {
  const { name } = facts;
  const valued = grid.filter((r) => [...r.cells.values()].some((c) => c.value !== null));
  const base = {
    name,
    ...(facts.hidden ? { hidden: true as const } : {}),
    used_range: usedRange(name, grid),
  };
  const headerIndex = headerRowIndex(valued);
  const header = valued[headerIndex];
  if (header === undefined) {
    const warnings = valued.length > 0 ? [`${name}: no header row (no row has two or more values); not profiled`] : [];
    const sheet = {
      ...base,
      range: '',
      header_row: 0,
      headers: [],
      types: {},
      row_count: 0,
      columns: [],
      tables: [...facts.tables],
    };
    return { sheet, warnings };
  }
  const blockRows = valued.slice(headerIndex);
  const { left, right } = columnSpan(blockRows, true);
  const bottom = blockRows[blockRows.length - 1]?.row ?? header.row;
  const warnings: string[] = [];
  const headers = headerNames(name, header, left, right, warnings);
  const dataRows = blockRows.slice(1);
  const cap = facts.profileRowCap ?? PROFILE_ROW_CAP;
  const profiled = dataRows.slice(0, cap);
  warnings.push(...errorWarnings(name, [header, ...profiled], left, right));
  const columns = headers.map((h, i) => profileColumn(columnCells(h, left + i, profiled)));
  const types = Object.fromEntries(columns.map((c) => [c.name, c.type]));
  const hiddenRows = dataRows.filter((r) => r.hidden).length;
  const sheet: WorkbookSheet = {
    ...base,
    range: rangeText(name, header.row, left, bottom, right),
    header_row: header.row,
    headers,
    types,
    row_count: dataRows.length,
    ...(hiddenRows > 0 ? { hidden_rows: hiddenRows } : {}),
    columns,
    ...(dataRows.length > cap ? { profile_truncated: true as const } : {}),
    tables: [...facts.tables],
    sample: profiled.slice(0, SAMPLE_ROWS).map((r) => sampleRow(r, headers, left)),
  };
  return { sheet, warnings };
}

/**
 * The index in `valued` of the header row (`workbook.md` "Finding the table
 * of a sheet"): the first row with two or more values; on a sheet where no
 * row has two (a one-column list), the first valued row when its value is
 * text and a valued row follows it; -1 when there is none.
 */
function headerRowIndex(valued: readonly GridRow[]): number {
  const wide = valued.findIndex((r) => countValues(r) >= 2);
  if (wide >= 0) return wide;
  const first = valued[0];
  if (first === undefined || valued.length < 2) return -1;
  const cell = [...first.cells.values()].find((c) => c.value !== null);
  return cell?.type === 'string' ? 0 : -1;
}

function countValues(row: GridRow): number {
  let n = 0;
  for (const cell of row.cells.values()) if (cell.value !== null) n += 1;
  return n;
}

/** The bounding box of every non-empty cell, error cells included (`''` for an empty sheet). */
function usedRange(name: string, grid: readonly GridRow[]): string {
  const first = grid[0];
  const last = grid[grid.length - 1];
  if (first === undefined || last === undefined) return '';
  const { left, right } = columnSpan(grid, false);
  return rangeText(name, first.row, left, last.row, right);
}

/** The first and last column holding a cell (only valued cells with `valuesOnly`); loops, not spreads: rows can be many. */
function columnSpan(rows: readonly GridRow[], valuesOnly: boolean): { left: number; right: number } {
  let left = Number.POSITIVE_INFINITY;
  let right = 0;
  for (const r of rows) {
    for (const [col, cell] of r.cells) {
      if (valuesOnly && cell.value === null) continue;
      if (col < left) left = col;
      if (col > right) right = col;
    }
  }
  return { left, right };
}

/**
 * Header names (`workbook.md`): trimmed, line breaks as spaces; an empty one
 * is named after its column letter; a repeated one gets `_2`, `_3`, ….
 */
function headerNames(sheet: string, header: GridRow, left: number, right: number, warnings: string[]): string[] {
  const raw: string[] = [];
  for (let col = left; col <= right; col += 1) {
    const text = textOfValue(header.cells.get(col)?.value ?? null)
      .replace(/\r\n|\r|\n/g, ' ')
      .trim();
    if (text === '') {
      const letter = columnLetter(col);
      warnings.push(`${sheet}!${letter}${header.row}: header is empty; column named ${letter}`);
      raw.push(letter);
    } else {
      raw.push(text);
    }
  }
  const taken = new Set<string>();
  return raw.map((text) => {
    if (!taken.has(text)) {
      taken.add(text);
      return text;
    }
    let n = 2;
    while (taken.has(`${text}_${n}`)) n += 1;
    const renamed = `${text}_${n}`;
    taken.add(renamed);
    warnings.push(`${sheet}: duplicate header "${text}" renamed ${renamed}`);
    return renamed;
  });
}

function errorWarnings(sheet: string, rows: readonly GridRow[], left: number, right: number): string[] {
  const errors: string[] = [];
  for (const r of rows) {
    for (const [col, cell] of r.cells) {
      if (cell.error !== undefined && col >= left && col <= right) {
        errors.push(`${sheet}!${columnLetter(col)}${r.row}: error cell ${cell.error}`);
      }
    }
  }
  if (errors.length <= MAX_ERROR_WARNINGS) return errors;
  const more = errors.length - MAX_ERROR_WARNINGS;
  return [...errors.slice(0, MAX_ERROR_WARNINGS), `${sheet}: ${more} more error cells not listed`];
}

function columnCells(name: string, col: number, rows: readonly GridRow[]): ColumnCells {
  return { name, col, cells: rows.map((r) => ({ row: r.row, cell: nonNull(r.cells.get(col)) })) };
}

function nonNull(cell: TypedCell | undefined): TypedCell | undefined {
  return cell?.value === null ? undefined : cell;
}

function sampleRow(r: GridRow, headers: readonly string[], left: number): Record<string, WorkbookCellValue> {
  const row: Record<string, WorkbookCellValue> = {};
  headers.forEach((h, i) => {
    row[h] = r.cells.get(left + i)?.value ?? null;
  });
  row._row = r.row;
  return row;
}
