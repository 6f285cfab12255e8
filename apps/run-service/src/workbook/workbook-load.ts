import ExcelJS from 'exceljs';
import officeCrypto from 'officecrypto-tool';
import type { WorkbookModel, WorkbookSheet } from '@dagu-mcp/contracts';
import type { DateSystem } from './cell-typing';
import { readGrid } from './sheet-grid';
import { describeSheet } from './sheet-model';

/**
 * Why a file could not be described (mapped to 021's errors by
 * `workbook-reader.ts`): `password` — protected and the password is missing
 * or wrong; `encryption` — protected with an encryption the decryptor does
 * not support; `not_workbook` — not an OOXML workbook.
 */
export type WorkbookFault = 'password' | 'encryption' | 'not_workbook';

/** A {@link WorkbookFault}, thrown by {@link describeWorkbook}. */
export class WorkbookFaultError extends Error {
  constructor(readonly fault: WorkbookFault) {
    super(`workbook fault: ${fault}`);
    this.name = 'WorkbookFaultError';
  }
}

/** The first bytes of an OLE compound file: how an encrypted OOXML workbook is stored. */
const CFB_SIGNATURE = Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]);

/**
 * The workbook model of an `.xlsx` / `.xlsm` file's bytes (Dagu spec 021
 * Workbook; `workbook.md`). A protected workbook is decrypted in memory
 * with officecrypto-tool; the workbook is read with ExcelJS.
 *
 * @param path the resolved path, reported as `data.path`
 * @param profileRowCap data rows profiled per sheet (`workbook.md`: 10,000)
 * @throws WorkbookFaultError for a protected workbook without the right
 *   password, an unsupported encryption, or bytes that are not a workbook
 */
export async function describeWorkbook(
  bytes: Buffer,
  options: { path: string; password?: string; profileRowCap?: number },
): Promise<WorkbookModel> {
  const plain = await decryptIfProtected(bytes, options.password);
  const workbook = new ExcelJS.Workbook();
  const names = captureDefinedNames(workbook);
  try {
    // ExcelJS types its input as an ArrayBuffer (JSZip takes either); a copy into a plain one satisfies them.
    await workbook.xlsx.load(new Uint8Array(plain).buffer);
  } catch {
    throw new WorkbookFaultError('not_workbook');
  }
  const system: DateSystem = workbook.properties.date1904 ? '1904' : '1900';
  const sheets: WorkbookSheet[] = [];
  const warnings: string[] = [];
  for (const sheet of workbook.worksheets) {
    const described = describeSheet(
      {
        name: sheet.name,
        hidden: sheet.state === 'hidden' || sheet.state === 'veryHidden',
        tables: tablesOf(sheet),
        ...(options.profileRowCap !== undefined ? { profileRowCap: options.profileRowCap } : {}),
      },
      readGrid(sheet, system),
    );
    sheets.push(described.sheet);
    warnings.push(...described.warnings);
  }
  return { path: options.path, date_system: system, sheets, named_ranges: names.list(), warnings };
}

async function decryptIfProtected(bytes: Buffer, password: string | undefined): Promise<Buffer> {
  if (bytes.length < CFB_SIGNATURE.length || !bytes.subarray(0, CFB_SIGNATURE.length).equals(CFB_SIGNATURE)) {
    return bytes;
  }
  let encrypted: boolean;
  try {
    encrypted = officeCrypto.isEncrypted(bytes);
  } catch {
    throw new WorkbookFaultError('not_workbook');
  }
  // A compound file without encryption info is a legacy .xls (or anything else), not an OOXML workbook.
  if (!encrypted) throw new WorkbookFaultError('not_workbook');
  if (password === undefined) throw new WorkbookFaultError('password');
  try {
    return await officeCrypto.decrypt(bytes, { password });
  } catch (error) {
    const message = error instanceof Error ? error.message : '';
    throw new WorkbookFaultError(/password is incorrect/i.test(message) ? 'password' : 'encryption');
  }
}

/** ExcelJS's typings say `[Table, void][]`; at run time `getTables()` returns the tables themselves. */
function tablesOf(sheet: ExcelJS.Worksheet): Array<{ name: string; range: string }> {
  const tables: readonly unknown[] = sheet.getTables();
  return tables.map((t) => tableOf(sheet.name, Array.isArray(t) ? t[0] : t));
}

/** A table as ExcelJS reads it: `{name, tableRef}` in its model (ExcelJS's typings call it `Table`). */
function tableOf(sheet: string, table: unknown): { name: string; range: string } {
  const model = typeof table === 'object' && table !== null && 'model' in table ? table.model : undefined;
  const record = typeof model === 'object' && model !== null ? model : {};
  const name = 'name' in record && typeof record.name === 'string' ? record.name : '';
  const ref = 'tableRef' in record && typeof record.tableRef === 'string' ? record.tableRef : '';
  return { name, range: `${sheet}!${ref}` };
}

/**
 * ExcelJS keeps defined names without their scope (it merges a sheet's and
 * the workbook's name of the same spelling), so the parsed list is taken
 * from ExcelJS's own `reconcile` step, where each name still has its
 * `localSheetId`, together with the sheet list it indexes. ExcelJS keeps
 * only names that refer to ranges (a name for a constant or a formula is not
 * listed: docs/decisions.md "Workbook reads"); built-in `_xlnm.` names
 * (print areas, the filter database) are left out.
 */
function captureDefinedNames(workbook: ExcelJS.Workbook): { list(): WorkbookModel['named_ranges'] } {
  let captured: WorkbookModel['named_ranges'] = [];
  const xlsx: unknown = workbook.xlsx;
  if (!hasReconcile(xlsx)) return { list: () => captured };
  const reconcile = xlsx.reconcile.bind(xlsx);
  xlsx.reconcile = (model: unknown, opts: unknown) => {
    captured = namesOfModel(model);
    reconcile(model, opts);
  };
  return { list: () => captured };
}

function hasReconcile(value: unknown): value is { reconcile: (model: unknown, opts: unknown) => void } {
  return typeof value === 'object' && value !== null && 'reconcile' in value && typeof value.reconcile === 'function';
}

function namesOfModel(model: unknown): WorkbookModel['named_ranges'] {
  if (typeof model !== 'object' || model === null) return [];
  const sheets = 'sheets' in model && Array.isArray(model.sheets) ? (model.sheets as unknown[]) : [];
  const names = 'definedNames' in model && Array.isArray(model.definedNames) ? (model.definedNames as unknown[]) : [];
  const sheetName = (index: number): string => {
    const sheet = sheets[index];
    return typeof sheet === 'object' && sheet !== null && 'name' in sheet && typeof sheet.name === 'string'
      ? sheet.name
      : 'workbook';
  };
  const named: WorkbookModel['named_ranges'] = [];
  for (const entry of names) {
    if (typeof entry !== 'object' || entry === null) continue;
    const name = 'name' in entry && typeof entry.name === 'string' ? entry.name : '';
    const ranges = 'ranges' in entry && Array.isArray(entry.ranges) ? entry.ranges.filter(isString) : [];
    if (name === '' || name.startsWith('_xlnm.') || ranges.length === 0) continue;
    const local = 'localSheetId' in entry && typeof entry.localSheetId === 'number' ? entry.localSheetId : undefined;
    named.push({ name, refers_to: ranges.join(','), scope: local === undefined ? 'workbook' : sheetName(local) });
  }
  return named;
}

function isString(value: unknown): value is string {
  return typeof value === 'string';
}
