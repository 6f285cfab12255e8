import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { RunDetail } from '@dagu-mcp/contracts';
import { runUris, type IdentifiedRun } from '../../../actions/run-control.actions';
import { RESULT_REFERENCES } from '../../../reference/reference-topics';
import { toolSuccess, type ResourceLink } from '../tool-result';
import type { ExecuteRequest } from './execute-input';
import type { AskNote } from './execute-ask';
import type { WaitOutcome } from './execute-wait';

/** `content[0]` without `wait` (036 §Output). */
export const TEXT_DONE = 'Dagu execute action completed.';

/** The `subscribe` sentence (036 §Output: run identified and `wait` false). */
export function subscribeSentence(runUri: string): string {
  return `Subscribe to ${runUri} with resources/subscribe to be notified when the run finishes or reaches a waiting checkpoint.`;
}

/** The success text of each wait outcome (036 §Output "Success texts"); the non-final ones point at `runUri`. */
export function waitText(outcome: WaitOutcome, runUri: string): string {
  const follow = `poll ${runUri} with dagu_read or subscribe to it for the outcome.`;
  switch (outcome.kind) {
    case 'finished':
      return `${TEXT_DONE} The run finished with status ${outcome.observed.statusLabel}.`;
    case 'waiting':
      return `${TEXT_DONE} The run is waiting at a human task or approval gate; the run field shows what it needs, and ${runUri} tells when it goes on.${answerText(outcome.observed.run)}`;
    case 'timeout':
      return `${TEXT_DONE} The run is still ${outcome.observed.statusLabel} after waiting ${outcome.waitedSeconds} s; it keeps going, so ${follow}`;
    case 'interrupted':
      return `${TEXT_DONE} The wait was interrupted before the run finished; the run keeps going, so ${follow}`;
    case 'failed':
      return `${TEXT_DONE} Waiting for the run failed (${outcome.error}); the run keeps going, so ${follow}`;
  }
}

/** The body each kind of answer takes (run-service checks it against the form or the approval's inputs). */
const ANSWER_BODIES: Readonly<Record<string, string>> = {
  'human-task': '{"values": {<form field>: <value>}}',
  approval: '{"decision": "approve" or "reject", "input": {<name>: <value>}}',
};

/**
 * How to answer each waiting step of `run` (dagu-model §5 `answer`), as
 * sentences for the result text; empty when no step carries an `answer`
 * (a run waiting for a child run: the child's steps carry it).
 */
export function answerText(run: RunDetail): string {
  const lines: string[] = [];
  for (const step of run.steps) {
    if (step.answer === undefined) continue;
    const { method, path, role, surface } = step.answer;
    const body = ANSWER_BODIES[path.slice(path.lastIndexOf('/') + 1)] ?? '{}';
    lines.push(
      ` To answer step ${step.name}: ${method} ${path} with ${body} (role ${role} or higher, over ${surface}).`,
    );
  }
  return lines.join('');
}

/**
 * A successful `dagu_execute` result (036 §Output):
 * - `content`: the text, then `dag_run` and `dag_run_logs` resource links;
 * - `structuredContent`: `{action, targetType, dagName, dagRunId, references,
 *   runUri, logsUri}` plus `subscribe` without a wait, or `completed`,
 *   `status`, `statusLabel`, `run` (finished / waiting checkpoint) and
 *   `waitError` (wait failure) with one; `checkpointQuestion {stepName, outcome,
 *   message}` when asking the person in the client did not decide the checkpoint.
 *
 * @param outcome the wait's outcome; `undefined` when the request had no `wait`
 */
export function executeSuccess(
  request: Pick<ExecuteRequest, 'action' | 'targetType'>,
  run: IdentifiedRun,
  outcome: WaitOutcome | undefined,
  asked?: AskNote,
): CallToolResult {
  const { runUri, logsUri } = runUris(run);
  const structured: Record<string, unknown> = {
    action: request.action,
    targetType: request.targetType,
    dagName: run.dagName,
    dagRunId: run.dagRunId,
    references: [...RESULT_REFERENCES],
    runUri,
    logsUri,
  };
  if (outcome === undefined) {
    structured.subscribe = subscribeSentence(runUri);
  } else {
    structured.completed = outcome.kind === 'finished';
    structured.status = outcome.observed.status;
    structured.statusLabel = outcome.observed.statusLabel;
    if (outcome.kind === 'finished' || outcome.kind === 'waiting') structured.run = outcome.observed.run;
    if (outcome.kind === 'failed') structured.waitError = outcome.error;
    // Why asking in the client did not decide the checkpoint.
    if (asked !== undefined) structured.checkpointQuestion = asked;
  }
  const links: ResourceLink[] = [
    { uri: runUri, name: 'dag_run', mimeType: 'application/json' },
    { uri: logsUri, name: 'dag_run_logs', mimeType: 'application/json' },
  ];
  const text = outcome === undefined ? TEXT_DONE : waitText(outcome, runUri);
  return toolSuccess(asked === undefined ? text : `${text} ${asked.message}`, structured, links);
}
