/**
 * The run inspector (issue 27): an MCP App (ext-apps `App`) a host renders for a
 * `dagu_execute` call. It learns the run from the tool result the host forwards
 * (`ui/notifications/tool-result`), then does everything through the host bridge with
 * the gateway's own tools — `dagu_read` for the run and a step's log, `dagu_execute` for
 * stop and retry — so the caller's role and the audit apply unchanged. No fetches of its
 * own: the host's sandbox and CSP apply.
 */
import {
  App,
  applyDocumentTheme,
  applyHostStyleVariables,
  type McpUiHostContext,
} from '@modelcontextprotocol/ext-apps';
import {
  describeRun,
  errorOfToolResult,
  isRunFinished,
  runOfToolResult,
  stepLogOf,
  type RunView,
} from '../src/run-model';
import { renderLog, renderRun, type ViewElements } from './view';

/** While a run is active the inspector re-reads it this often, ms. */
const POLL_MS = 1000;
/** Lines of a step's log the inspector shows (its tail). */
const LOG_TAIL = 200;

const app = new App({ name: 'dagu-run-inspector', version: '1.0.0' }, {});
const view = elements();
let run: RunView | undefined;
let selected: string | undefined;
let timer: ReturnType<typeof setTimeout> | undefined;
let busy = false;

app.ontoolresult = (result) => {
  if (result.isError === true) return note(errorOfToolResult(result) ?? 'The call failed.');
  const found = runOfToolResult(result);
  if (found === undefined) return note('This result names no DAG-run.');
  run = found;
  show();
  void refresh();
};
app.onhostcontextchanged = (context) => theme(context);

view.refresh.addEventListener('click', () => void refresh());
view.stop.addEventListener('click', () => void act('stop'));
view.retry.addEventListener('click', () => void act('retry'));
view.steps.addEventListener('click', (event) => {
  const item = event.target instanceof Element ? event.target.closest('li[data-step]') : null;
  const name = item?.getAttribute('data-step') ?? undefined;
  if (name === undefined || name === null) return;
  selected = name;
  show();
  void loadLog();
});

void app.connect().then(() => theme(app.getHostContext()));

/** Re-reads the run with `dagu_read` (021 `run`), then the selected step's log; polls while it runs. */
async function refresh(): Promise<void> {
  if (run === undefined) return;
  clearTimeout(timer);
  const { dagName, dagRunId } = run;
  try {
    const result = await app.callServerTool({
      name: 'dagu_read',
      arguments: { target: 'run', name: dagName, dagRunId },
    });
    if (result.isError === true) note(errorOfToolResult(result) ?? 'Reading the run failed.');
    else {
      const next = runOfToolResult(result);
      run = next ?? describeRun(dagName, dagRunId, undefined, run.statusLabel);
      selected ??= pickStep(run);
      note('');
    }
  } catch (err) {
    note(`Reading the run failed: ${String(err)}`);
  }
  show();
  await loadLog();
  if (!isRunFinished(run.statusLabel)) timer = setTimeout(() => void refresh(), POLL_MS);
}

/** Stops or retries the run with `dagu_execute` (036 `stop`, `retry`), then follows it again. */
async function act(action: 'stop' | 'retry'): Promise<void> {
  if (run === undefined || busy) return;
  busy = true;
  show();
  note(action === 'stop' ? 'Stopping…' : 'Retrying…');
  try {
    const result = await app.callServerTool({
      name: 'dagu_execute',
      arguments: { action, targetType: 'run', name: run.dagName, dagRunId: run.dagRunId },
    });
    note(
      result.isError === true
        ? (errorOfToolResult(result) ?? `${action} failed.`)
        : `${action === 'stop' ? 'Stop' : 'Retry'} requested.`,
    );
  } catch (err) {
    note(`${action} failed: ${String(err)}`);
  } finally {
    busy = false;
  }
  await refresh();
}

/** Shows the tail of the selected step's log (`dagu_read` 021 `step_log`). */
async function loadLog(): Promise<void> {
  if (run === undefined || selected === undefined) return renderLog(view, undefined, '');
  const stepName = selected;
  try {
    const result = await app.callServerTool({
      name: 'dagu_read',
      arguments: { target: 'step_log', name: run.dagName, dagRunId: run.dagRunId, stepName, query: `tail=${LOG_TAIL}` },
    });
    if (selected !== stepName) return;
    renderLog(view, stepName, result.isError === true ? (errorOfToolResult(result) ?? '') : stepLogOf(result));
  } catch (err) {
    renderLog(view, stepName, `Reading the log failed: ${String(err)}`);
  }
}

/** The step worth showing first: the first failed one, else the last one that started. */
function pickStep(view: RunView): string | undefined {
  const failed = view.steps.find((s) => s.statusLabel === 'failed');
  if (failed !== undefined) return failed.name;
  const started = view.steps.filter((s) => s.statusLabel !== 'not_started');
  return (started[started.length - 1] ?? view.steps[0])?.name;
}

function show(): void {
  renderRun(view, run, selected, busy);
}

function note(message: string): void {
  view.note.textContent = message;
}

function theme(context: McpUiHostContext | undefined): void {
  if (context?.theme !== undefined) applyDocumentTheme(context.theme);
  if (context?.styles?.variables !== undefined) applyHostStyleVariables(context.styles.variables);
}

function elements(): ViewElements {
  const find = <T extends Element>(selector: string): T => {
    const found = document.querySelector<T>(selector);
    if (found === null) throw new Error(`run inspector: ${selector} is missing`);
    return found;
  };
  return {
    dagName: find('[data-testid=dag-name]'),
    runId: find('[data-testid=run-id]'),
    status: find('[data-testid=run-status]'),
    note: find('[data-testid=note]'),
    steps: find('[data-testid=steps]'),
    logTitle: find('[data-testid=log-title]'),
    log: find('[data-testid=log]'),
    refresh: find('#refresh'),
    stop: find('#stop'),
    retry: find('#retry'),
  };
}
