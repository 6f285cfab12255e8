/**
 * Workbooks the workbook-read tests generate (issue 20): written with ExcelJS,
 * protected ones encrypted with officecrypto-tool, so every case is a real
 * `.xlsx` file whose contents the test knows cell by cell.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import ExcelJS from 'exceljs';
import officeCrypto from 'officecrypto-tool';

/** The password of {@link writeProtectedWorkbook}'s file; spaces kept (021: the password is kept as supplied). */
export const WORKBOOK_PASSWORD = ' s3cret-Pa55 ';

const DATE = 'yyyy-mm-dd';
const DATETIME = 'yyyy-mm-dd hh:mm:ss';

async function save(workbook: ExcelJS.Workbook, dir: string, name: string): Promise<string> {
  const path = join(dir, name);
  await workbook.xlsx.writeFile(path);
  return path;
}

/**
 * `orders.xlsx`, the workbook most assertions read:
 * - sheet `Orders`: a title in A1, the header in row 3 from B: `Customer`
 *   merged over B3:C3 (so C is `Customer_2`), `Amount`, an empty header (E),
 *   `Amount` again (`Amount_2`), `Due⏎Date`, `When`, `Paid`, `Code`; data in
 *   rows 4–9 and 11 (row 10 empty); an autofilter over B3:J11 hiding row 5,
 *   row 6 hidden by hand; `#N/A` in D7; text `n/a` among the integers of
 *   `Amount_2` (F8); `Code` is text with leading zeros;
 * - sheet `Secret`, very hidden, with the table `Rates` (A1:B3);
 * - sheet `Empty`, with nothing in it;
 * - the workbook-scoped names `OrderAmounts` (Orders!$D$4:$D$9) and `RateCell`.
 */
export async function writeOrdersWorkbook(dir: string): Promise<string> {
  const wb = new ExcelJS.Workbook();
  const ws = wb.addWorksheet('Orders');
  ws.getCell('A1').value = 'Orders 2026';
  ws.getRow(3).values = [null, 'Customer', null, 'Amount', '', 'Amount', 'Due\nDate', 'When', 'Paid', 'Code'];
  ws.mergeCells('B3:C3');
  const rows: Array<[number, unknown[]]> = [
    [4, ['Acme', 'East', 10, 'x', 1, date(2026, 10, 1), dateTime(2026, 10, 1, 14, 30, 0), true, '007']],
    [5, ['Beta', 'West', 20.5, null, 2, date(2026, 10, 2), dateTime(2026, 10, 2, 9, 0, 0), false, '010']],
    [6, ['Acme', 'East', 30, null, 3, date(2026, 10, 3), date(2026, 10, 3), true, '007']],
    [7, ['Gamma', 'North', { error: '#N/A' }, null, 4, null, dateTime(2026, 10, 4, 8, 15, 30), false, '120']],
    [8, ['Delta', 'South', 12, null, 'n/a', date(2026, 10, 5), dateTime(2026, 10, 5, 23, 59, 59), true, '007']],
    [9, ['Acme', 'East', 8, null, 6, date(2026, 10, 6), dateTime(2026, 10, 6, 0, 0, 1), null, '']],
    [11, ['Omega', null, null, null, null, null, null, null, null]],
  ];
  for (const [r, values] of rows) {
    const row = ws.getRow(r);
    values.forEach((v, i) => {
      if (v !== null) row.getCell(i + 2).value = v as ExcelJS.CellValue;
    });
    row.getCell(7).numFmt = DATE;
    row.getCell(8).numFmt = r === 6 ? DATE : DATETIME;
  }
  ws.autoFilter = 'B3:J11';
  ws.getRow(5).hidden = true;
  ws.getRow(6).hidden = true;
  const secret = wb.addWorksheet('Secret', { state: 'veryHidden' });
  secret.addTable({
    name: 'Rates',
    ref: 'A1',
    headerRow: true,
    columns: [{ name: 'Code' }, { name: 'Rate' }],
    rows: [
      ['007', 0.5],
      ['010', 0.25],
    ],
  });
  wb.addWorksheet('Empty');
  wb.definedNames.add('Orders!$D$4:$D$9', 'OrderAmounts');
  wb.definedNames.add('Secret!$B$2', 'RateCell');
  return save(wb, dir, 'orders.xlsx');
}

/** `dates-1904.xlsm`: the 1904 date system; `Day` 2026-10-01, `At` 2026-10-01T14:30:00, `Elapsed` `[h]:mm` 1.5, `Clock` 15:04:05. */
export async function write1904Workbook(dir: string): Promise<string> {
  const wb = new ExcelJS.Workbook();
  wb.properties.date1904 = true;
  const ws = wb.addWorksheet('Times');
  ws.addRow(['Day', 'At', 'Elapsed', 'Clock']);
  const row = ws.addRow([date(2026, 10, 1), dateTime(2026, 10, 1, 14, 30, 0), 1.5, 0]);
  row.getCell(1).numFmt = DATE;
  row.getCell(2).numFmt = DATETIME;
  row.getCell(3).numFmt = '[h]:mm';
  // 15:04:05 as a fraction of a day, in a time format.
  row.getCell(4).value = (15 * 3600 + 4 * 60 + 5) / 86_400;
  row.getCell(4).numFmt = 'hh:mm:ss';
  return save(wb, dir, 'dates-1904.xlsm');
}

/** `big.xlsx`: one sheet `Rows` with `n` data rows (`Id` 1…n, `Even` booleans). */
export async function writeBigWorkbook(dir: string, n: number, name = 'big.xlsx'): Promise<string> {
  const wb = new ExcelJS.Workbook();
  const ws = wb.addWorksheet('Rows');
  ws.addRow(['Id', 'Even']);
  for (let i = 1; i <= n; i += 1) ws.addRow([i, i % 2 === 0]);
  return save(wb, dir, name);
}

/** `one-column.xlsx`: one sheet `List`, a one-column list: the text `n` in A1 above 1…n (Dagu 077's case). */
export async function writeOneColumnWorkbook(dir: string, n: number): Promise<string> {
  const wb = new ExcelJS.Workbook();
  const ws = wb.addWorksheet('List');
  ws.addRow(['n']);
  for (let i = 1; i <= n; i += 1) ws.addRow([i]);
  return save(wb, dir, 'one-column.xlsx');
}

/** `protected.xlsx`: `Sheet1` with `k`/`v` and one row, ECMA-376 agile encryption under `password`. */
export async function writeProtectedWorkbook(dir: string, password = WORKBOOK_PASSWORD): Promise<string> {
  const wb = new ExcelJS.Workbook();
  const ws = wb.addWorksheet('Sheet1');
  ws.addRow(['k', 'v']);
  ws.addRow(['answer', 42]);
  const plain = Buffer.from(await wb.xlsx.writeBuffer());
  const path = join(dir, 'protected.xlsx');
  await writeFile(path, officeCrypto.encrypt(plain, { password }));
  return path;
}

function date(y: number, m: number, d: number): Date {
  return new Date(Date.UTC(y, m - 1, d));
}

function dateTime(y: number, m: number, d: number, h: number, min: number, s: number): Date {
  return new Date(Date.UTC(y, m - 1, d, h, min, s));
}
