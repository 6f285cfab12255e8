import { constants } from 'node:fs';
import { access, readFile, stat } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import {
  DaguError,
  hasWorkbookExtension,
  WORKBOOK_EXTENSION_MESSAGE,
  WorkbookModelSchema,
  type WorkbookModel,
  type WorkbookReadRequest,
} from '@dagu-mcp/contracts';
import { WorkbookSlots } from './workbook-slots';
import { WorkbookWorkers } from './workbook-workers';

/** Limits of one workbook read (`RUN_WORKBOOK_*`, `config/run-config.ts`). */
export interface WorkbookLimits {
  /** Largest file read, in bytes (`RUN_WORKBOOK_MAX_BYTES`). */
  readonly maxBytes: number;
  /** Longest parse, in ms, also bounded by the request's deadline (`RUN_WORKBOOK_TIME_BUDGET_MS`). */
  readonly timeBudgetMs: number;
  /** Heap of the parsing worker thread, in MiB (`RUN_WORKBOOK_MEMORY_MB`). */
  readonly memoryMb: number;
  /** Reads parsed at once by this replica; more wait for a slot within their deadline (`RUN_WORKBOOK_CONCURRENCY`). */
  readonly concurrency: number;
  /** Data rows profiled per sheet; default 10,000 (`workbook.md`). Tests lower it. */
  readonly profileRowCap?: number;
}

/** What {@link WorkbookReader} is built from. */
export interface WorkbookReaderOptions {
  /** `RUN_WORKBOOK_*` limits. */
  readonly limits: WorkbookLimits;
  /** Base of relative paths (`RUN_WORK_DIR`). */
  readonly workDir: string;
  /** `execArgv` of the worker thread (tests: a TypeScript loader); default the process's. */
  readonly workerExecArgv?: readonly string[];
}

/** An Excel owner file (`~$<name>`) younger than this means the workbook is open elsewhere (`workbook.md`, *ours*). */
const OWNER_FILE_FRESH_MS = 60_000;
/** Time kept back from the deadline for the reply to travel. */
const REPLY_MARGIN_MS = 250;
const MIB = 1024 * 1024;

/**
 * Reads workbooks for the 021 `workbook` target: resolves the path against
 * `RUN_WORK_DIR`, checks the file (`workbook.md` "Which files"), then parses
 * it in a worker thread with a heap limit and a time budget, so one huge or
 * hostile workbook can neither block run-service's event loop nor exhaust its
 * memory. The password goes to the worker in memory only.
 */
export class WorkbookReader {
  private readonly slots: WorkbookSlots;
  private readonly workers: WorkbookWorkers;

  constructor(private readonly options: WorkbookReaderOptions) {
    this.slots = new WorkbookSlots(options.limits.concurrency);
    this.workers = new WorkbookWorkers({
      keep: options.limits.concurrency,
      memoryMb: options.limits.memoryMb,
      ...(options.workerExecArgv !== undefined ? { execArgv: options.workerExecArgv } : {}),
    });
  }

  /**
   * The workbook model of `request.path` (Dagu spec 021 Workbook).
   *
   * @param deadline epoch ms after which nobody waits for the answer
   * @throws DaguError `invalid_tool_input` on `path` (not `.xlsx`/`.xlsm`) or on
   *   `password` (missing or incorrect); `resource_not_found` (no such file);
   *   `resource_unavailable` (unreadable, open in another program, over the size
   *   limit, not a workbook, unsupported encryption, over the time budget or
   *   the memory limit)
   */
  async read(request: WorkbookReadRequest, deadline: number): Promise<WorkbookModel> {
    if (!hasWorkbookExtension(request.path)) {
      throw new DaguError('invalid_tool_input', WORKBOOK_EXTENSION_MESSAGE, { field: 'path' });
    }
    const path = isAbsolute(request.path) ? resolve(request.path) : resolve(this.options.workDir, request.path);
    const name = basename(path);
    await this.checkFile(path, name);
    // The slot first: reads waiting for one hold no file bytes in memory.
    const release = await this.slots.acquire(deadline - REPLY_MARGIN_MS).catch(() => {
      throw new DaguError(
        'resource_unavailable',
        `${name}: too many workbook reads at once on this replica; try again`,
      );
    });
    try {
      const bytes = await readFile(path).catch((error: unknown) => {
        throw fileError(error, name);
      });
      // A file that grew since it was checked is held to the same limit.
      this.checkSize(bytes.length, name);
      return await this.parse(bytes, path, name, request.password, deadline);
    } finally {
      release();
    }
  }

  private checkSize(size: number, name: string): void {
    const { maxBytes } = this.options.limits;
    if (size <= maxBytes) return;
    throw new DaguError(
      'resource_unavailable',
      `${name}: the workbook is ${sizeText(size)}, over the ${sizeText(maxBytes)} limit of this server (RUN_WORKBOOK_MAX_BYTES)`,
      { details: { sizeBytes: size, maxBytes } },
    );
  }

  private async checkFile(path: string, name: string): Promise<void> {
    const info = await stat(path).catch((error: unknown) => {
      throw fileError(error, name);
    });
    if (!info.isFile()) throw new DaguError('resource_unavailable', `${name}: not a workbook file`);
    this.checkSize(info.size, name);
    await access(path, constants.R_OK).catch((error: unknown) => {
      throw fileError(error, name);
    });
    const owner = await stat(join(dirname(path), `~$${name}`)).catch(() => undefined);
    if (owner !== undefined && Date.now() - owner.mtimeMs < OWNER_FILE_FRESH_MS) {
      throw new DaguError(
        'resource_unavailable',
        `${name}: the workbook is open in another program (~$${name} beside it is less than a minute old); try again once it is closed`,
      );
    }
  }

  /** Ends the idle parsing threads (run-service's shutdown). */
  close(): Promise<void> {
    return this.workers.close();
  }

  private async parse(
    bytes: Buffer,
    path: string,
    name: string,
    password: string | undefined,
    deadline: number,
  ): Promise<WorkbookModel> {
    const { limits } = this.options;
    const budgetMs = Math.max(0, Math.min(limits.timeBudgetMs, deadline - Date.now() - REPLY_MARGIN_MS));
    const outcome = await this.workers.parse(
      {
        bytes,
        path,
        ...(password !== undefined ? { password } : {}),
        ...(limits.profileRowCap !== undefined ? { profileRowCap: limits.profileRowCap } : {}),
      },
      budgetMs,
    );
    if (outcome.kind === 'timeout') {
      throw new DaguError(
        'resource_unavailable',
        `${name}: reading the workbook took longer than ${budgetMs} ms (RUN_WORKBOOK_TIME_BUDGET_MS and the call's deadline); it is too big to describe in time`,
      );
    }
    if (outcome.kind === 'error') throw workerError(outcome.error, name, limits.memoryMb);
    return modelOf(outcome.message, name);
  }
}

/** The worker's answer as the model, or the 021 error its fault stands for. */
function modelOf(message: unknown, name: string): WorkbookModel {
  if (typeof message !== 'object' || message === null || !('ok' in message)) {
    throw new Error('workbook worker sent a malformed message');
  }
  if (message.ok === true && 'model' in message) return WorkbookModelSchema.parse(message.model);
  const fault = 'fault' in message ? message.fault : undefined;
  if (fault === 'password') {
    throw new DaguError('invalid_tool_input', `${name}: workbook password is missing or incorrect`, {
      field: 'password',
    });
  }
  if (fault === 'encryption') {
    throw new DaguError('resource_unavailable', `${name}: the workbook's encryption is not supported`);
  }
  if (fault === 'not_workbook') {
    throw new DaguError('resource_unavailable', `${name}: not a workbook (the file cannot be read as .xlsx)`);
  }
  const detail = 'message' in message && typeof message.message === 'string' ? message.message : '';
  throw new Error(`workbook worker failed: ${detail}`);
}

function workerError(error: Error, name: string, memoryMb: number): Error {
  if ('code' in error && error.code === 'ERR_WORKER_OUT_OF_MEMORY') {
    return new DaguError(
      'resource_unavailable',
      `${name}: the workbook needs more than the ${memoryMb} MiB this server gives a workbook read (RUN_WORKBOOK_MEMORY_MB)`,
    );
  }
  return error;
}

/** 021: a missing file is `resource_not_found`; one that cannot be read is `resource_unavailable`. */
function fileError(error: unknown, name: string): Error {
  const code = typeof error === 'object' && error !== null && 'code' in error ? error.code : undefined;
  if (code === 'ENOENT' || code === 'ENOTDIR') {
    return new DaguError('resource_not_found', `${name}: workbook not found`);
  }
  if (code === 'EACCES' || code === 'EPERM') {
    return new DaguError('resource_unavailable', `${name}: the workbook cannot be read (permission denied)`);
  }
  if (code === 'EISDIR') return new DaguError('resource_unavailable', `${name}: not a workbook file`);
  if (code === 'EBUSY')
    return new DaguError('resource_unavailable', `${name}: the workbook is locked by another program`);
  return error instanceof Error ? error : new Error(String(error));
}

/** `25 MiB`, `180.3 KiB`: one decimal, none when it is 0. */
function sizeText(bytes: number): string {
  const [value, unit] = bytes >= MIB ? [bytes / MIB, 'MiB'] : [bytes / 1024, 'KiB'];
  return `${value.toFixed(1).replace(/\.0$/, '')} ${unit}`;
}
