import { z } from 'zod';

/**
 * The `run.workbook` op (Dagu spec 021 `workbook` target; `workbook.md` defines
 * how the table is found, how cells are typed and the column profile).
 * run-service reads the file where steps run; a relative `path` resolves
 * against `RUN_WORK_DIR`. `password` is a secret: the op is `carriesSecret`,
 * so its bus job is removed whether it completes or fails (docs/decisions.md
 * "Workbook reads").
 */
export const WorkbookReadRequestSchema = z.strictObject({
  /** The path as supplied (trimmed): absolute, or relative to `RUN_WORK_DIR`. */
  path: z.string().min(1).max(4096),
  /** Password of a protected workbook, exactly as supplied (021 §Input). */
  password: z.string().min(1).max(255).optional(),
});
export type WorkbookReadRequest = z.infer<typeof WorkbookReadRequestSchema>;

/** A cell value as the profile types it (`workbook.md` "Typing cells"). */
export type WorkbookCellValue = string | number | boolean | null;

/** The six column types of 021's workbook model. */
export const WorkbookColumnTypeSchema = z.enum(['string', 'number', 'integer', 'boolean', 'date', 'datetime']);
export type WorkbookColumnType = z.infer<typeof WorkbookColumnTypeSchema>;

const CellValue = z.union([z.string(), z.number(), z.boolean(), z.null()]);

/** One column profile (`workbook.md` "The sheet entry"). */
export const WorkbookColumnSchema = z.looseObject({
  name: z.string(),
  type: WorkbookColumnTypeSchema,
  filled: z.number().int().nonnegative(),
  blank: z.number().int().nonnegative(),
  distinct: z.number().int().nonnegative(),
  values: z.array(z.string()).optional(),
  min: z.union([z.number(), z.string()]).optional(),
  max: z.union([z.number(), z.string()]).optional(),
  odd: z.number().int().positive().optional(),
  odd_cells: z
    .array(z.object({ cell: z.string(), text: z.string() }))
    .max(5)
    .optional(),
});
export type WorkbookColumn = z.infer<typeof WorkbookColumnSchema>;

/** One sheet entry of the workbook model (021 Workbook, `workbook.md`). */
export const WorkbookSheetSchema = z.looseObject({
  name: z.string(),
  hidden: z.literal(true).optional(),
  used_range: z.string(),
  range: z.string(),
  header_row: z.number().int().nonnegative(),
  headers: z.array(z.string()),
  types: z.record(z.string(), WorkbookColumnTypeSchema),
  row_count: z.number().int().nonnegative(),
  hidden_rows: z.number().int().positive().optional(),
  columns: z.array(WorkbookColumnSchema),
  profile_truncated: z.literal(true).optional(),
  tables: z.array(z.object({ name: z.string(), range: z.string() })),
  sample: z.array(z.record(z.string(), CellValue)).max(5).optional(),
});
export type WorkbookSheet = z.infer<typeof WorkbookSheetSchema>;

/** The workbook model: `data` of a `dagu_read target=workbook` (021 Workbook). */
export const WorkbookModelSchema = z.looseObject({
  path: z.string(),
  date_system: z.enum(['1900', '1904']),
  sheets: z.array(WorkbookSheetSchema),
  named_ranges: z.array(z.object({ name: z.string(), refers_to: z.string(), scope: z.string() })),
  warnings: z.array(z.string()),
});
export type WorkbookModel = z.infer<typeof WorkbookModelSchema>;

/** The extensions the target reads, compared case-insensitively (`workbook.md` "Which files"). */
export const WORKBOOK_EXTENSIONS = ['.xlsx', '.xlsm'] as const;

/** The `invalid_tool_input` message on `path` for any other extension (`workbook.md`). */
export const WORKBOOK_EXTENSION_MESSAGE = 'only .xlsx and .xlsm workbooks are supported; save as .xlsx';

/** Whether `path` names an `.xlsx` or `.xlsm` file (case-insensitive). */
export function hasWorkbookExtension(path: string): boolean {
  const lower = path.toLowerCase();
  return WORKBOOK_EXTENSIONS.some((ext) => lower.endsWith(ext));
}
