import type { HandlerMap } from '@dagu-mcp/bus';
import type { RunOps } from '@dagu-mcp/contracts';
import { createPingHandler, onReads } from '@dagu-mcp/service-kit';
import type { RunDeps } from '../runs/run-deps';
import { createRunApprovalHandler, createRunHumanTaskHandler } from './run-checkpoint.handlers';
import { createRunForeachItemHandler, createRunForeachItemsHandler } from './run-foreach.handlers';
import { createRunGetHandler } from './run-get.handler';
import { createRunLatestHandler } from './run-latest.handler';
import { createRunListHandler } from './run-list.handler';
import { createRunLogsHandler } from './run-logs.handler';
import { createRunRetryHandler } from './run-retry.handler';
import { createRunStartHandler } from './run-start.handler';
import { createRunStepLogHandler } from './run-step-log.handler';
import { createRunStopHandler } from './run-stop.handler';
import { createRunWorkbookHandler } from './run-workbook.handler';
import type { WorkbookReader } from '../workbook/workbook-reader';
import { createProfileHandlers } from './profile.handlers';
import type { SecretSource } from '../store/profile-env';

/** The complete handler map of run-service (`runOps`, CONTRIBUTING §5). */
export function createRunHandlers(deps: RunDeps, workbooks: WorkbookReader, secrets: SecretSource): HandlerMap<RunOps> {
  return {
    ping: createPingHandler('run-service', deps.replica),
    'run.start': createRunStartHandler(deps),
    'run.retry': createRunRetryHandler(deps),
    'run.stop': createRunStopHandler(deps),
    // Lag-tolerant reads: lists, and ended runs' detail and logs, on the replica when it may.
    'run.get': onReads(deps.reads, deps.pool, (db) => createRunGetHandler(db, db !== deps.pool)),
    'run.list': onReads(deps.reads, deps.pool, (db) => createRunListHandler(db, db !== deps.pool)),
    'run.logs': onReads(deps.reads, deps.pool, (db) =>
      createRunLogsHandler(db, deps.config.logReadMaxBytes, db !== deps.pool),
    ),
    'run.stepLog': onReads(deps.reads, deps.pool, (db) =>
      createRunStepLogHandler(db, deps.config.logReadMaxBytes, db !== deps.pool),
    ),
    'run.latest': createRunLatestHandler(deps.pool),
    'run.humanTask': createRunHumanTaskHandler(deps),
    'run.approval': createRunApprovalHandler(deps),
    'run.foreachItems': createRunForeachItemsHandler(deps.pool),
    'run.foreachItem': createRunForeachItemHandler(deps.pool),
    'run.workbook': createRunWorkbookHandler(workbooks),
    ...createProfileHandlers(deps.pool, secrets),
  };
}
