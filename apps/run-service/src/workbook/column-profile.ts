import type { WorkbookColumn, WorkbookColumnType } from '@dagu-mcp/contracts';
import { columnTypeOf, fitsColumn, type CellType } from './cell-typing';
import { textOfValue, type TypedCell } from './cell-value';
import { columnLetter } from './sheet-grid';

/** At most this many distinct values are listed as `values` (`workbook.md`). */
export const MAX_LISTED_VALUES = 20;
/** At most this many examples in `odd_cells` (`workbook.md`). */
export const MAX_ODD_CELLS = 5;

/** The cells of one column over the profiled data rows, with their sheet row numbers. */
export interface ColumnCells {
  readonly name: string;
  /** 1-based sheet column. */
  readonly col: number;
  readonly cells: ReadonlyArray<{ readonly row: number; readonly cell: TypedCell | undefined }>;
}

/**
 * Profiles one column (`workbook.md` "The sheet entry", *ours*): `type` by
 * the column rule, `filled` non-null and `blank` null cells, `distinct`
 * non-null values; `values` (sorted: numerically for number columns, else
 * by text) when at most 20 are distinct; `min` / `max` over the cells of
 * the column's type for `integer`, `number`, `date` and `datetime` columns;
 * `odd` and up to five `odd_cells` `{cell, text}` for cells whose own type
 * does not fit the column's.
 */
export function profileColumn(column: ColumnCells): WorkbookColumn {
  const counts: Partial<Record<CellType, number>> = {};
  const distinct = new Map<string, TypedCell>();
  let filled = 0;
  for (const { cell } of column.cells) {
    if (cell?.type === undefined) continue;
    filled += 1;
    counts[cell.type] = (counts[cell.type] ?? 0) + 1;
    distinct.set(`${typeof cell.value}:${String(cell.value)}`, cell);
  }
  const type = columnTypeOf(counts);
  const profile: WorkbookColumn = {
    name: column.name,
    type,
    filled,
    blank: column.cells.length - filled,
    distinct: distinct.size,
  };
  if (distinct.size > 0 && distinct.size <= MAX_LISTED_VALUES)
    profile.values = sortedTexts([...distinct.values()], type);
  const range = minMaxOf(column, type);
  if (range !== undefined) Object.assign(profile, range);
  const odd = column.cells.filter(({ cell }) => cell?.type !== undefined && !fitsColumn(cell.type, type));
  if (odd.length > 0) {
    profile.odd = odd.length;
    profile.odd_cells = odd
      .slice(0, MAX_ODD_CELLS)
      .map(({ row, cell }) => ({ cell: `${columnLetter(column.col)}${row}`, text: textOfValue(cell?.value ?? null) }));
  }
  return profile;
}

function sortedTexts(cells: TypedCell[], type: WorkbookColumnType): string[] {
  if (type === 'integer' || type === 'number') {
    return cells
      .map((c) => Number(c.value))
      .sort((a, b) => a - b)
      .map(String);
  }
  return cells.map((c) => textOfValue(c.value)).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/** ISO dates and date-times order as text (a date sorts before the date-times of its day). */
function minMaxOf(
  column: ColumnCells,
  type: WorkbookColumnType,
): { min: number | string; max: number | string } | undefined {
  if (type !== 'integer' && type !== 'number' && type !== 'date' && type !== 'datetime') return undefined;
  let min: number | string | undefined;
  let max: number | string | undefined;
  for (const { cell } of column.cells) {
    if (cell?.type === undefined || !fitsColumn(cell.type, type) || cell.value === null) continue;
    const v = cell.value;
    if (typeof v === 'boolean') continue;
    if (min === undefined || v < min) min = v;
    if (max === undefined || v > max) max = v;
  }
  return min === undefined || max === undefined ? undefined : { min, max };
}
