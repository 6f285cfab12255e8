import type { Worksheet } from 'exceljs';
import type { DateSystem } from './cell-typing';
import { typeCellValue, type TypedCell } from './cell-value';

/** One sheet row that holds at least one non-null or error cell. */
export interface GridRow {
  /** 1-based sheet row number. */
  readonly row: number;
  /** Hidden by a filter or by hand. */
  readonly hidden: boolean;
  /** 1-based column number → typed cell; null cells without an error are left out. */
  readonly cells: ReadonlyMap<number, TypedCell>;
}

/**
 * The typed cells of a worksheet, row by row in sheet order (`workbook.md`
 * "Typing cells"). A merged range's value counts in every cell it covers:
 * ExcelJS gives each covered cell its master's value.
 */
export function readGrid(sheet: Worksheet, system: DateSystem): GridRow[] {
  const rows: GridRow[] = [];
  sheet.eachRow({ includeEmpty: false }, (row, rowNumber) => {
    const cells = new Map<number, TypedCell>();
    row.eachCell({ includeEmpty: false }, (cell, col) => {
      const typed = typeCellValue(cell.value, cell.numFmt, system);
      if (typed.value !== null || typed.error !== undefined) cells.set(col, typed);
    });
    if (cells.size > 0) rows.push({ row: rowNumber, hidden: row.hidden, cells });
  });
  return rows;
}

/** `A`, …, `Z`, `AA`, … of a 1-based column number. */
export function columnLetter(col: number): string {
  let n = col;
  let letters = '';
  while (n > 0) {
    const rem = (n - 1) % 26;
    letters = String.fromCharCode(65 + rem) + letters;
    n = Math.floor((n - 1) / 26);
  }
  return letters;
}

/** `Sheet!A1:F120` (sheet name unquoted, `workbook.md`), or `Sheet!B2` for one cell. */
export function rangeText(sheet: string, top: number, left: number, bottom: number, right: number): string {
  const start = `${columnLetter(left)}${top}`;
  const end = `${columnLetter(right)}${bottom}`;
  return start === end ? `${sheet}!${start}` : `${sheet}!${start}:${end}`;
}
