/**
 * What the run inspector shows, read from tool results (pure; shared by the app in `app/`
 * and its unit tests). Shapes: `dagu_execute` results (spec 036 §Output: `structuredContent`
 * `{dagName, dagRunId, status?, statusLabel?, run?}`) and `dagu_read` results (spec 021
 * §Output: `structuredContent.data` is the run-detail or step-log model).
 */

/** One step as the inspector lists it. */
export interface StepView {
  readonly name: string;
  readonly statusLabel: string;
  readonly startedAt?: string;
  readonly finishedAt?: string;
  readonly error?: string;
}

/** The run as the inspector shows it. */
export interface RunView {
  readonly dagName: string;
  readonly dagRunId: string;
  /** Undefined until the first read answered. */
  readonly statusLabel?: string;
  readonly startedAt?: string;
  readonly finishedAt?: string;
  readonly steps: readonly StepView[];
}

/** Run status labels after which a run changes no more (contracts `TERMINAL_RUN_STATUSES`, plus `not_started`). */
const FINISHED_LABELS: ReadonlySet<string> = new Set([
  'succeeded',
  'failed',
  'aborted',
  'partially_succeeded',
  'rejected',
  'not_started',
]);

/** True when `label` is a run status that will not change without a new action (stop, retry). */
export function isRunFinished(label: string | undefined): boolean {
  return label !== undefined && FINISHED_LABELS.has(label);
}

const record = (value: unknown): Record<string, unknown> | undefined =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? { ...value } : undefined;
const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

/**
 * The run a tool result names: a `dagu_execute` result (036) gives its DAG name and run id
 * (and the run itself after a finished wait); a `dagu_read` `run` result (021) gives the
 * whole detail. `undefined` for an error result or any other shape.
 */
export function runOfToolResult(result: unknown): RunView | undefined {
  const body = record(result);
  if (body === undefined || body.isError === true) return undefined;
  const structured = record(body.structuredContent);
  if (structured === undefined) return undefined;
  const detail = record(structured.data) ?? record(structured.run);
  const dagName = text(structured.dagName) ?? text(detail?.name);
  const dagRunId = text(structured.dagRunId) ?? text(detail?.dagRunId);
  if (dagName === undefined || dagRunId === undefined) return undefined;
  return describeRun(dagName, dagRunId, detail, text(structured.statusLabel));
}

/** A {@link RunView} from a run-detail model (021), or only the ids when there is none yet. */
export function describeRun(
  dagName: string,
  dagRunId: string,
  detail: Record<string, unknown> | undefined,
  statusLabel?: string,
): RunView {
  const steps = Array.isArray(detail?.steps) ? detail.steps : [];
  return {
    dagName,
    dagRunId,
    statusLabel: text(detail?.statusLabel) ?? statusLabel,
    startedAt: text(detail?.startedAt),
    finishedAt: text(detail?.finishedAt),
    steps: steps.flatMap((raw: unknown) => {
      const step = record(raw);
      const name = text(step?.name);
      if (step === undefined || name === undefined) return [];
      return [
        {
          name,
          statusLabel: text(step.statusLabel) ?? 'unknown',
          startedAt: text(step.startedAt),
          finishedAt: text(step.finishedAt),
          error: text(step.error),
        },
      ];
    }),
  };
}

/** The text of a `dagu_read` `step_log` result (021 step-log model): stdout, then stderr under a marker. */
export function stepLogOf(result: unknown): string {
  const data = record(record(record(result)?.structuredContent)?.data);
  const stdout = text(data?.stdoutContent) ?? '';
  const stderr = text(data?.stderrContent) ?? '';
  return stderr === ''
    ? stdout
    : `${stdout}${stdout === '' || stdout.endsWith('\n') ? '' : '\n'}--- stderr ---\n${stderr}`;
}

/** The message of a tool error result (the 020 error object's `message` in `structuredContent`, else the first text). */
export function errorOfToolResult(result: unknown): string | undefined {
  const body = record(result);
  const message = record(body?.structuredContent)?.message;
  if (typeof message === 'string') return message;
  const first = Array.isArray(body?.content) ? record(body.content[0]) : undefined;
  return text(first?.text);
}
