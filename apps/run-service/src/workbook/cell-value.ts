import type { CellValue } from 'exceljs';
import type { WorkbookCellValue } from '@dagu-mcp/contracts';
import {
  cellTypeOf,
  classifyNumberFormat,
  dateToSerial,
  serialToIso,
  type CellType,
  type DateSystem,
} from './cell-typing';

/** One cell as the profile sees it: its typed value, its own type, and the error it shows, if any. */
export interface TypedCell {
  readonly value: WorkbookCellValue;
  /** Undefined for a null cell. */
  readonly type: CellType | undefined;
  /** `#N/A`, `#DIV/0!`, … for an error cell (whose value is null). */
  readonly error?: string;
}

const NULL_CELL: TypedCell = { value: null, type: undefined };

/**
 * Types one ExcelJS cell value (`workbook.md` "Typing cells"): a formula is
 * its cached result; a number with a date, time or date-time format becomes
 * ISO 8601 text (an elapsed `[h]:mm` stays a number); rich text and
 * hyperlinks become their text; text that is empty after trimming, and an
 * error cell, are null (the error is kept for its warning).
 *
 * @param numFmt the cell's number format (`cell.numFmt`), undefined for General
 */
export function typeCellValue(raw: CellValue, numFmt: string | undefined, system: DateSystem): TypedCell {
  if (raw === null || raw === undefined) return NULL_CELL;
  if (typeof raw === 'boolean') return { value: raw, type: 'boolean' };
  if (typeof raw === 'string') return raw.trim() === '' ? NULL_CELL : { value: raw, type: 'string' };
  if (typeof raw === 'number') return typeNumber(raw, numFmt, system);
  if (raw instanceof Date) return typeNumber(roundSerial(dateToSerial(raw, system)), numFmt, system);
  if ('error' in raw) return { value: null, type: undefined, error: raw.error };
  if ('richText' in raw) return typeCellValue(raw.richText.map((part) => part.text).join(''), undefined, system);
  if ('hyperlink' in raw) return typeCellValue(textOf(raw.text), undefined, system);
  if ('formula' in raw || 'sharedFormula' in raw) return typeCellValue(raw.result ?? null, numFmt, system);
  return NULL_CELL;
}

function typeNumber(serial: number, numFmt: string | undefined, system: DateSystem): TypedCell {
  if (!Number.isFinite(serial)) return NULL_CELL;
  const kind = classifyNumberFormat(numFmt);
  if (kind === 'number') return { value: serial, type: cellTypeOf(serial) };
  const text = serialToIso(serial, kind, system);
  // A time of day is text: 021's column types have no time.
  return { value: text, type: kind === 'time' ? 'string' : kind };
}

/** ExcelJS rounds a date to the millisecond; undo the float noise that leaves in the serial number. */
function roundSerial(serial: number): number {
  return Math.round(serial * 1e10) / 1e10;
}

/** ExcelJS may hand a hyperlink's text over as rich text. */
function textOf(text: unknown): string {
  if (typeof text === 'string') return text;
  if (typeof text === 'object' && text !== null && 'richText' in text && Array.isArray(text.richText)) {
    return text.richText.map((part: unknown) => (isTextPart(part) ? part.text : '')).join('');
  }
  return '';
}

function isTextPart(part: unknown): part is { text: string } {
  return typeof part === 'object' && part !== null && 'text' in part && typeof part.text === 'string';
}

/** The text of a typed value (`values`, `odd_cells`, header names): numbers as JSON writes them. */
export function textOfValue(value: WorkbookCellValue): string {
  return value === null ? '' : String(value);
}
