/**
 * The workbook model read from real files (Dagu spec 021 Workbook,
 * `workbook.md`): workbooks the tests generate with ExcelJS (encrypted with
 * officecrypto-tool) and one saved by LibreOffice Calc
 * (test/fixtures/workbooks), each parsed by the real worker thread and
 * asserted field by field; then every file error of 021 and the limits.
 * It stays one file past 300 lines because the expected models are written
 * out whole, field by field, next to the files they describe.
 */
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  WORKBOOK_PASSWORD,
  write1904Workbook,
  writeBigWorkbook,
  writeOrdersWorkbook,
  writeProtectedWorkbook,
} from '../../test-fixtures/workbook-files';
import { daguErrorOf } from '../../../../packages/contracts/test-fixtures/dagu-error-of';
import { WorkbookReader, type WorkbookLimits } from './workbook-reader';

const ROOT = join(__dirname, '..', '..', '..', '..');
/** The worker thread runs this file's TypeScript siblings, as Jest does (SWC on require). */
const EXEC_ARGV = ['--require', join(ROOT, 'packages', 'bus', 'test-fixtures', 'ts-register.js')];
// A generous budget: the worker threads compile their TypeScript on first use, which takes
// seconds on a loaded CI machine (the limits tests below use their own small budgets).
const LIMITS: WorkbookLimits = { maxBytes: 10 * 1024 * 1024, timeBudgetMs: 45_000, memoryMb: 256, concurrency: 2 };
jest.setTimeout(90_000);
const LIBREOFFICE_FIXTURE = join(ROOT, 'test', 'fixtures', 'workbooks', 'libreoffice-sales.xlsx');

let dir: string;

function reader(limits: Partial<WorkbookLimits> = {}): WorkbookReader {
  return new WorkbookReader({ workDir: dir, limits: { ...LIMITS, ...limits }, workerExecArgv: EXEC_ARGV });
}

const soon = (): number => Date.now() + 60_000;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'workbook-reader-'));
  await writeOrdersWorkbook(dir);
  await write1904Workbook(dir);
  await writeProtectedWorkbook(dir);
  await writeBigWorkbook(dir, 10_050);
  copyFileSync(LIBREOFFICE_FIXTURE, join(dir, 'libreoffice-sales.xlsx'));
}, 60_000);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the workbook model (021 Workbook, workbook.md)', () => {
  test('orders.xlsx: title row skipped, merged/empty/duplicate headers, filtered and hidden rows, error cell, very hidden sheet with a table, empty sheet, named ranges', async () => {
    const model = await reader().read({ path: 'orders.xlsx' }, soon());
    expect(model).toEqual({
      path: join(dir, 'orders.xlsx'),
      date_system: '1900',
      sheets: [
        {
          name: 'Orders',
          used_range: 'Orders!A1:J11',
          range: 'Orders!B3:J11',
          header_row: 3,
          headers: ['Customer', 'Customer_2', 'Amount', 'E', 'Amount_2', 'Due Date', 'When', 'Paid', 'Code'],
          types: {
            Customer: 'string',
            Customer_2: 'string',
            Amount: 'number',
            E: 'string',
            Amount_2: 'string',
            'Due Date': 'date',
            When: 'datetime',
            Paid: 'boolean',
            Code: 'string',
          },
          row_count: 7,
          hidden_rows: 2,
          columns: [
            {
              name: 'Customer',
              type: 'string',
              filled: 7,
              blank: 0,
              distinct: 5,
              values: ['Acme', 'Beta', 'Delta', 'Gamma', 'Omega'],
            },
            {
              name: 'Customer_2',
              type: 'string',
              filled: 6,
              blank: 1,
              distinct: 4,
              values: ['East', 'North', 'South', 'West'],
            },
            {
              name: 'Amount',
              type: 'number',
              filled: 5,
              blank: 2,
              distinct: 5,
              values: ['8', '10', '12', '20.5', '30'],
              min: 8,
              max: 30,
            },
            { name: 'E', type: 'string', filled: 1, blank: 6, distinct: 1, values: ['x'] },
            {
              name: 'Amount_2',
              type: 'string',
              filled: 6,
              blank: 1,
              distinct: 6,
              values: ['1', '2', '3', '4', '6', 'n/a'],
              odd: 5,
              odd_cells: [
                { cell: 'F4', text: '1' },
                { cell: 'F5', text: '2' },
                { cell: 'F6', text: '3' },
                { cell: 'F7', text: '4' },
                { cell: 'F9', text: '6' },
              ],
            },
            {
              name: 'Due Date',
              type: 'date',
              filled: 5,
              blank: 2,
              distinct: 5,
              values: ['2026-10-01', '2026-10-02', '2026-10-03', '2026-10-05', '2026-10-06'],
              min: '2026-10-01',
              max: '2026-10-06',
            },
            {
              name: 'When',
              type: 'datetime',
              filled: 6,
              blank: 1,
              distinct: 6,
              values: [
                '2026-10-01T14:30:00',
                '2026-10-02T09:00:00',
                '2026-10-03',
                '2026-10-04T08:15:30',
                '2026-10-05T23:59:59',
                '2026-10-06T00:00:01',
              ],
              min: '2026-10-01T14:30:00',
              max: '2026-10-06T00:00:01',
            },
            { name: 'Paid', type: 'boolean', filled: 5, blank: 2, distinct: 2, values: ['false', 'true'] },
            { name: 'Code', type: 'string', filled: 5, blank: 2, distinct: 3, values: ['007', '010', '120'] },
          ],
          tables: [],
          sample: [
            {
              Customer: 'Acme',
              Customer_2: 'East',
              Amount: 10,
              E: 'x',
              Amount_2: 1,
              'Due Date': '2026-10-01',
              When: '2026-10-01T14:30:00',
              Paid: true,
              Code: '007',
              _row: 4,
            },
            {
              Customer: 'Beta',
              Customer_2: 'West',
              Amount: 20.5,
              E: null,
              Amount_2: 2,
              'Due Date': '2026-10-02',
              When: '2026-10-02T09:00:00',
              Paid: false,
              Code: '010',
              _row: 5,
            },
            {
              Customer: 'Acme',
              Customer_2: 'East',
              Amount: 30,
              E: null,
              Amount_2: 3,
              'Due Date': '2026-10-03',
              When: '2026-10-03',
              Paid: true,
              Code: '007',
              _row: 6,
            },
            {
              Customer: 'Gamma',
              Customer_2: 'North',
              Amount: null,
              E: null,
              Amount_2: 4,
              'Due Date': null,
              When: '2026-10-04T08:15:30',
              Paid: false,
              Code: '120',
              _row: 7,
            },
            {
              Customer: 'Delta',
              Customer_2: 'South',
              Amount: 12,
              E: null,
              Amount_2: 'n/a',
              'Due Date': '2026-10-05',
              When: '2026-10-05T23:59:59',
              Paid: true,
              Code: '007',
              _row: 8,
            },
          ],
        },
        {
          name: 'Secret',
          hidden: true,
          used_range: 'Secret!A1:B3',
          range: 'Secret!A1:B3',
          header_row: 1,
          headers: ['Code', 'Rate'],
          types: { Code: 'string', Rate: 'number' },
          row_count: 2,
          columns: [
            { name: 'Code', type: 'string', filled: 2, blank: 0, distinct: 2, values: ['007', '010'] },
            {
              name: 'Rate',
              type: 'number',
              filled: 2,
              blank: 0,
              distinct: 2,
              values: ['0.25', '0.5'],
              min: 0.25,
              max: 0.5,
            },
          ],
          tables: [{ name: 'Rates', range: 'Secret!A1:B3' }],
          sample: [
            { Code: '007', Rate: 0.5, _row: 2 },
            { Code: '010', Rate: 0.25, _row: 3 },
          ],
        },
        {
          name: 'Empty',
          used_range: '',
          range: '',
          header_row: 0,
          headers: [],
          types: {},
          row_count: 0,
          columns: [],
          tables: [],
        },
      ],
      named_ranges: [
        { name: 'OrderAmounts', refers_to: 'Orders!$D$4:$D$9', scope: 'workbook' },
        { name: 'RateCell', refers_to: 'Secret!$B$2', scope: 'workbook' },
      ],
      warnings: [
        'Orders!E3: header is empty; column named E',
        'Orders: duplicate header "Customer" renamed Customer_2',
        'Orders: duplicate header "Amount" renamed Amount_2',
        'Orders!D7: error cell #N/A',
      ],
    });
  });

  test('dates-1904.xlsm: the 1904 date system; dates and date-times as ISO text, [h]:mm stays a number, a time of day is text', async () => {
    const model = await reader().read({ path: 'dates-1904.xlsm' }, soon());
    expect(model.date_system).toBe('1904');
    expect(model.sheets).toEqual([
      {
        name: 'Times',
        used_range: 'Times!A1:D2',
        range: 'Times!A1:D2',
        header_row: 1,
        headers: ['Day', 'At', 'Elapsed', 'Clock'],
        types: { Day: 'date', At: 'datetime', Elapsed: 'number', Clock: 'string' },
        row_count: 1,
        columns: [
          {
            name: 'Day',
            type: 'date',
            filled: 1,
            blank: 0,
            distinct: 1,
            values: ['2026-10-01'],
            min: '2026-10-01',
            max: '2026-10-01',
          },
          {
            name: 'At',
            type: 'datetime',
            filled: 1,
            blank: 0,
            distinct: 1,
            values: ['2026-10-01T14:30:00'],
            min: '2026-10-01T14:30:00',
            max: '2026-10-01T14:30:00',
          },
          { name: 'Elapsed', type: 'number', filled: 1, blank: 0, distinct: 1, values: ['1.5'], min: 1.5, max: 1.5 },
          { name: 'Clock', type: 'string', filled: 1, blank: 0, distinct: 1, values: ['15:04:05'] },
        ],
        tables: [],
        sample: [{ Day: '2026-10-01', At: '2026-10-01T14:30:00', Elapsed: 1.5, Clock: '15:04:05', _row: 2 }],
      },
    ]);
    expect(model.named_ranges).toEqual([]);
    expect(model.warnings).toEqual([]);
  });

  test('protected.xlsx: decrypted in memory with the password kept exactly (spaces included)', async () => {
    const model = await reader().read({ path: join(dir, 'protected.xlsx'), password: WORKBOOK_PASSWORD }, soon());
    expect(model).toEqual({
      path: join(dir, 'protected.xlsx'),
      date_system: '1900',
      sheets: [
        {
          name: 'Sheet1',
          used_range: 'Sheet1!A1:B2',
          range: 'Sheet1!A1:B2',
          header_row: 1,
          headers: ['k', 'v'],
          types: { k: 'string', v: 'integer' },
          row_count: 1,
          columns: [
            { name: 'k', type: 'string', filled: 1, blank: 0, distinct: 1, values: ['answer'] },
            { name: 'v', type: 'integer', filled: 1, blank: 0, distinct: 1, values: ['42'], min: 42, max: 42 },
          ],
          tables: [],
          sample: [{ k: 'answer', v: 42, _row: 2 }],
        },
      ],
      named_ranges: [],
      warnings: [],
    });
  });

  test('big.xlsx: 10,050 data rows, the profile reads 10,000 and says so; row_count stays exact', async () => {
    const model = await reader().read({ path: 'big.xlsx' }, soon());
    const [sheet] = model.sheets;
    expect(sheet).toMatchObject({
      name: 'Rows',
      range: 'Rows!A1:B10051',
      header_row: 1,
      row_count: 10_050,
      profile_truncated: true,
      types: { Id: 'integer', Even: 'boolean' },
    });
    expect(sheet?.columns).toEqual([
      { name: 'Id', type: 'integer', filled: 10_000, blank: 0, distinct: 10_000, min: 1, max: 10_000 },
      { name: 'Even', type: 'boolean', filled: 10_000, blank: 0, distinct: 2, values: ['false', 'true'] },
    ]);
    expect(sheet?.sample?.map((r) => r._row)).toEqual([2, 3, 4, 5, 6]);
  });

  test('a sheet at the cap is not truncated (profile_truncated absent)', async () => {
    await writeBigWorkbook(dir, 10_000, 'at-cap.xlsx');
    const [sheet] = (await reader().read({ path: 'at-cap.xlsx' }, soon())).sheets;
    expect(sheet?.row_count).toBe(10_000);
    expect(sheet).not.toHaveProperty('profile_truncated');
    expect(sheet?.columns[0]).toMatchObject({ filled: 10_000, max: 10_000 });
  });

  test('libreoffice-sales.xlsx, saved by LibreOffice Calc: merged header, leading zeros, date format, cached formula values, #N/A, hidden row, hidden sheet, sheet-scoped name', async () => {
    const model = await reader().read({ path: 'libreoffice-sales.xlsx' }, soon());
    expect(model).toEqual({
      path: join(dir, 'libreoffice-sales.xlsx'),
      date_system: '1900',
      sheets: [
        {
          name: 'Sales',
          used_range: 'Sales!A1:F4',
          range: 'Sales!A1:F4',
          header_row: 1,
          headers: ['Region', 'Product', 'Product_2', 'Units', 'Shipped', 'Total'],
          types: {
            Region: 'string',
            Product: 'string',
            Product_2: 'string',
            Units: 'integer',
            Shipped: 'date',
            Total: 'integer',
          },
          row_count: 3,
          hidden_rows: 1,
          columns: [
            { name: 'Region', type: 'string', filled: 3, blank: 0, distinct: 2, values: ['North', 'South'] },
            { name: 'Product', type: 'string', filled: 3, blank: 0, distinct: 3, values: ['007', '008', '009'] },
            {
              name: 'Product_2',
              type: 'string',
              filled: 3,
              blank: 0,
              distinct: 3,
              values: ['Gadget', 'Gizmo', 'Widget'],
            },
            {
              name: 'Units',
              type: 'integer',
              filled: 3,
              blank: 0,
              distinct: 3,
              values: ['3', '4', '10'],
              min: 3,
              max: 10,
            },
            {
              name: 'Shipped',
              type: 'date',
              filled: 3,
              blank: 0,
              distinct: 3,
              values: ['2026-10-01', '2026-10-02', '2026-10-03'],
              min: '2026-10-01',
              max: '2026-10-03',
            },
            {
              name: 'Total',
              type: 'integer',
              filled: 2,
              blank: 1,
              distinct: 2,
              values: ['10', '25'],
              min: 10,
              max: 25,
            },
          ],
          tables: [],
          sample: [
            {
              Region: 'North',
              Product: '007',
              Product_2: 'Widget',
              Units: 10,
              Shipped: '2026-10-01',
              Total: 25,
              _row: 2,
            },
            {
              Region: 'South',
              Product: '008',
              Product_2: 'Gadget',
              Units: 4,
              Shipped: '2026-10-02',
              Total: 10,
              _row: 3,
            },
            {
              Region: 'North',
              Product: '009',
              Product_2: 'Gizmo',
              Units: 3,
              Shipped: '2026-10-03',
              Total: null,
              _row: 4,
            },
          ],
        },
        {
          name: 'Lookup',
          hidden: true,
          used_range: 'Lookup!A1:B2',
          range: 'Lookup!A1:B2',
          header_row: 1,
          headers: ['Code', 'Rate'],
          types: { Code: 'string', Rate: 'number' },
          row_count: 1,
          columns: [
            { name: 'Code', type: 'string', filled: 1, blank: 0, distinct: 1, values: ['007'] },
            { name: 'Rate', type: 'number', filled: 1, blank: 0, distinct: 1, values: ['2.5'], min: 2.5, max: 2.5 },
          ],
          tables: [],
          sample: [{ Code: '007', Rate: 2.5, _row: 2 }],
        },
      ],
      named_ranges: [
        { name: 'Units', refers_to: 'Sales!$D$2:$D$4', scope: 'workbook' },
        { name: 'LocalRate', refers_to: 'Lookup!$B$2', scope: 'Lookup' },
      ],
      warnings: ['Sales: duplicate header "Product" renamed Product_2', 'Sales!F4: error cell #N/A'],
    });
  });
});

describe('021 errors of the workbook target', () => {
  test('another extension is invalid_tool_input on path with workbook.md’s message; the extension is case-insensitive', async () => {
    for (const path of ['report.csv', 'report.xls', 'report.xlsx.bak']) {
      const error = await daguErrorOf(reader().read({ path }, soon()));
      expect(error).toMatchObject({ code: 'invalid_tool_input', field: 'path' });
      expect(error.message).toBe('only .xlsx and .xlsm workbooks are supported; save as .xlsx');
    }
    copyFileSync(join(dir, 'orders.xlsx'), join(dir, 'UPPER.XLSX'));
    expect((await reader().read({ path: 'UPPER.XLSX' }, soon())).sheets).toHaveLength(3);
  });

  test('a missing file is resource_not_found: "<name>: workbook not found"', async () => {
    const error = await daguErrorOf(reader().read({ path: 'nowhere/missing.xlsx' }, soon()));
    expect(error).toMatchObject({ code: 'resource_not_found', message: 'missing.xlsx: workbook not found' });
  });

  test('a file that is not a workbook, or a directory, is resource_unavailable', async () => {
    writeFileSync(join(dir, 'notes.xlsx'), 'just some text, not a zip');
    expect(await daguErrorOf(reader().read({ path: 'notes.xlsx' }, soon()))).toMatchObject({
      code: 'resource_unavailable',
      message: 'notes.xlsx: not a workbook (the file cannot be read as .xlsx)',
    });
    mkdirSync(join(dir, 'folder.xlsx'));
    expect(await daguErrorOf(reader().read({ path: 'folder.xlsx' }, soon()))).toMatchObject({
      code: 'resource_unavailable',
      message: 'folder.xlsx: not a workbook file',
    });
  });

  test('a fresh Excel owner file ~$<name> beside it means another program holds it: resource_unavailable; a stale one is ignored', async () => {
    copyFileSync(join(dir, 'orders.xlsx'), join(dir, 'held.xlsx'));
    const owner = join(dir, '~$held.xlsx');
    writeFileSync(owner, 'owner');
    const error = await daguErrorOf(reader().read({ path: 'held.xlsx' }, soon()));
    expect(error.code).toBe('resource_unavailable');
    expect(error.message).toMatch(/^held\.xlsx: the workbook is open in another program/);
    const old = new Date(Date.now() - 120_000);
    utimesSync(owner, old, old);
    expect((await reader().read({ path: 'held.xlsx' }, soon())).sheets[0]?.name).toBe('Orders');
  });

  test('a protected workbook without its password, or with a wrong one, is invalid_tool_input on password', async () => {
    for (const password of [undefined, 'wrong', WORKBOOK_PASSWORD.trim()]) {
      const error = await daguErrorOf(
        reader().read({ path: 'protected.xlsx', ...(password !== undefined ? { password } : {}) }, soon()),
      );
      expect(error).toMatchObject({
        code: 'invalid_tool_input',
        field: 'password',
        message: 'protected.xlsx: workbook password is missing or incorrect',
      });
    }
  });

  test('an encryption the decryptor does not support is resource_unavailable', async () => {
    const bytes = readFileSync(join(dir, 'protected.xlsx'));
    // The agile EncryptionInfo stream starts with version 4.4 and reserved 0x40; another version is unsupported.
    const agile = Buffer.from([4, 0, 4, 0, 0x40, 0, 0, 0]);
    const at = bytes.indexOf(agile);
    expect(at).toBeGreaterThan(0);
    bytes.writeUInt16LE(9, at);
    bytes.writeUInt16LE(9, at + 2);
    writeFileSync(join(dir, 'odd-crypto.xlsx'), bytes);
    const error = await daguErrorOf(reader().read({ path: 'odd-crypto.xlsx', password: WORKBOOK_PASSWORD }, soon()));
    expect(error).toMatchObject({
      code: 'resource_unavailable',
      message: "odd-crypto.xlsx: the workbook's encryption is not supported",
    });
  });
});

describe('limits: size, time budget, memory', () => {
  test('a file over RUN_WORKBOOK_MAX_BYTES is resource_unavailable with sizes in the message', async () => {
    const error = await daguErrorOf(reader({ maxBytes: 50 * 1024 }).read({ path: 'big.xlsx' }, soon()));
    expect(error.code).toBe('resource_unavailable');
    expect(error.message).toMatch(
      /^big\.xlsx: the workbook is [\d.]+ KiB, over the 50 KiB limit of this server \(RUN_WORKBOOK_MAX_BYTES\)$/,
    );
    expect(error.details).toEqual({ sizeBytes: expect.any(Number) as unknown, maxBytes: 50 * 1024 });
  });

  test('a parse over the time budget is ended and answered resource_unavailable', async () => {
    const error = await daguErrorOf(reader({ timeBudgetMs: 50 }).read({ path: 'big.xlsx' }, soon()));
    expect(error.code).toBe('resource_unavailable');
    expect(error.message).toMatch(/^big\.xlsx: reading the workbook took longer than 50 ms/);
  });

  test('the call deadline bounds the budget too; the thread that ran over is replaced, warm ones are reused', async () => {
    const shared = reader();
    expect((await shared.read({ path: 'orders.xlsx' }, soon())).sheets).toHaveLength(3);
    const error = await daguErrorOf(shared.read({ path: 'big.xlsx' }, Date.now() + 400));
    expect(error.code).toBe('resource_unavailable');
    expect(error.message).toMatch(/took longer than \d+ ms/);
    const [again, other] = await Promise.all([
      shared.read({ path: 'orders.xlsx' }, soon()),
      shared.read({ path: 'dates-1904.xlsm' }, soon()),
    ]);
    expect(again.sheets[0]?.row_count).toBe(7);
    expect(other.date_system).toBe('1904');
    await shared.close();
  });

  test('a workbook needing more heap than RUN_WORKBOOK_MEMORY_MB is resource_unavailable, and the service lives on', async () => {
    const error = await daguErrorOf(reader({ memoryMb: 4 }).read({ path: 'big.xlsx' }, soon()));
    expect(error.code).toBe('resource_unavailable');
    expect(error.message).toMatch(/RUN_WORKBOOK_MEMORY_MB/);
    expect((await reader().read({ path: 'orders.xlsx' }, soon())).sheets).toHaveLength(3);
  });
});
