import type { z } from 'zod';
import { firstErrorPath } from '../test-fixtures/first-error-path';
import {
  ForeachItemRequestSchema,
  ForeachItemsRequestSchema,
  RunApprovalRequestSchema,
  RunDetailSchema,
  RunEventSchema,
  runEventsChannel,
  RunGetRequestSchema,
  RunHumanTaskRequestSchema,
  RunLatestReplySchema,
  RunLatestRequestSchema,
  RunLogsRequestSchema,
  RunRefSchema,
  RunRetryRequestSchema,
  RunStartRequestSchema,
  RunStopRequestSchema,
  StepLogRequestSchema,
} from './run';

/** The path of the first issue, dotted (`''` for the whole value), or `null` when the value is valid. */
const start = { dagName: 'nightly', spec: 'steps: []', inline: false, enqueue: false };
const ids = { dagName: 'nightly', dagRunId: 'run_2030-01-01_abc' };
const detail = {
  name: 'nightly',
  dagRunId: 'r1',
  uri: 'dagu://runs/nightly/r1',
  status: 4,
  statusLabel: 'succeeded',
  steps: [],
};

describe('run contracts (021 run models, 036 execute, dagu-model §1, §5, §6)', () => {
  const cases: Array<[string, z.ZodType, unknown, string | null]> = [
    ['start: stored DAG', RunStartRequestSchema, start, null],
    [
      'start: every option',
      RunStartRequestSchema,
      {
        ...start,
        inline: true,
        enqueue: true,
        dagRunId: 'my-run_1',
        params: 'A=1 B=2',
        queue: 'q',
        labels: ['x'],
        singleton: true,
      },
      null,
    ],
    ['start: missing inline', RunStartRequestSchema, { ...start, inline: undefined }, 'inline'],
    ['start: run id with a slash', RunStartRequestSchema, { ...start, dagRunId: 'a/b' }, 'dagRunId'],
    ['start: run id of 65 characters', RunStartRequestSchema, { ...start, dagRunId: 'r'.repeat(65) }, 'dagRunId'],
    ['start: empty spec', RunStartRequestSchema, { ...start, spec: '' }, 'spec'],
    ['start: DAG name of 41 characters', RunStartRequestSchema, { ...start, dagName: 'n'.repeat(41) }, 'dagName'],
    ['start: params as an object', RunStartRequestSchema, { ...start, params: { A: 1 } }, 'params'],
    ['start: empty label', RunStartRequestSchema, { ...start, labels: [''] }, 'labels.0'],
    ['start: unknown key', RunStartRequestSchema, { ...start, wait: true }, ''],
    [
      'ref: with extra fields (loose)',
      RunRefSchema,
      { dagName: 'a', dagRunId: 'r', status: 1, statusLabel: 'running', queuedAt: 't' },
      null,
    ],
    [
      'ref: status as a label',
      RunRefSchema,
      { dagName: 'a', dagRunId: 'r', status: 'running', statusLabel: 'running' },
      'status',
    ],
    ['retry: whole run', RunRetryRequestSchema, ids, null],
    [
      'retry: one step with downstream',
      RunRetryRequestSchema,
      { ...ids, stepName: 's', includeDownstream: true },
      null,
    ],
    ['retry: empty step name', RunRetryRequestSchema, { ...ids, stepName: '' }, 'stepName'],
    ['retry: missing run id', RunRetryRequestSchema, { dagName: 'a' }, 'dagRunId'],
    ['stop: valid', RunStopRequestSchema, ids, null],
    ['stop: extra key', RunStopRequestSchema, { ...ids, force: true }, ''],
    ['get: child run', RunGetRequestSchema, { ...ids, subRunId: 'child-1' }, null],
    ['get: bad sub run id', RunGetRequestSchema, { ...ids, subRunId: 'a b' }, 'subRunId'],
    ['detail: minimal', RunDetailSchema, detail, null],
    [
      'detail: a step without logUri',
      RunDetailSchema,
      { ...detail, steps: [{ name: 's', status: 4, statusLabel: 'succeeded' }] },
      'steps.0.logUri',
    ],
    ['detail: missing uri', RunDetailSchema, { ...detail, uri: undefined }, 'uri'],
    ['logs: tail 10000', RunLogsRequestSchema, { ...ids, tail: 10000 }, null],
    ['logs: tail 0', RunLogsRequestSchema, { ...ids, tail: 0 }, 'tail'],
    ['logs: tail 10001', RunLogsRequestSchema, { ...ids, tail: 10001 }, 'tail'],
    [
      'step log: with foreach item',
      StepLogRequestSchema,
      { ...ids, stepName: 's', item: 'x', bodyStepName: 'b' },
      null,
    ],
    ['step log: missing step', StepLogRequestSchema, ids, 'stepName'],
    ['human task: values', RunHumanTaskRequestSchema, { ...ids, stepName: 's', values: { a: 1, b: 'x' } }, null],
    ['human task: values an array', RunHumanTaskRequestSchema, { ...ids, stepName: 's', values: [1] }, 'values'],
    [
      'approval: approve with input',
      RunApprovalRequestSchema,
      { ...ids, stepName: 's', decision: 'approve', input: { reason: 'ok' } },
      null,
    ],
    ['approval: unknown decision', RunApprovalRequestSchema, { ...ids, stepName: 's', decision: 'maybe' }, 'decision'],
    [
      'approval: input value not a string',
      RunApprovalRequestSchema,
      { ...ids, stepName: 's', decision: 'reject', input: { n: 1 } },
      'input.n',
    ],
    ['foreach items: valid', ForeachItemsRequestSchema, { ...ids, stepName: 'each' }, null],
    ['foreach items: empty step', ForeachItemsRequestSchema, { ...ids, stepName: '' }, 'stepName'],
    ['foreach item: valid', ForeachItemRequestSchema, { ...ids, stepName: 'each', item: '0' }, null],
    ['foreach item: empty item', ForeachItemRequestSchema, { ...ids, stepName: 'each', item: '' }, 'item'],
    ['latest: no names', RunLatestRequestSchema, { dagNames: [] }, null],
    [
      'latest: 201 names',
      RunLatestRequestSchema,
      { dagNames: Array.from({ length: 201 }, (_, i) => `d${i}`) },
      'dagNames',
    ],
    ['latest: an empty name', RunLatestRequestSchema, { dagNames: ['a', ''] }, 'dagNames.1'],
    [
      'latest reply: by name',
      RunLatestReplySchema,
      { latest: { a: { dagRunId: 'r', status: 4, statusLabel: 'succeeded' } } },
      null,
    ],
    [
      'latest reply: entry without status',
      RunLatestReplySchema,
      { latest: { a: { dagRunId: 'r', statusLabel: 'x' } } },
      'latest.a.status',
    ],
    [
      'event: a child run',
      RunEventSchema,
      { name: 'child', dagRunId: 'c', root: { name: 'p', dagRunId: 'r' }, status: 1, statusLabel: 'running', at: 't' },
      null,
    ],
    ['event: missing at', RunEventSchema, { name: 'a', dagRunId: 'r', status: 1, statusLabel: 'running' }, 'at'],
    [
      'event: root without run id',
      RunEventSchema,
      { name: 'a', dagRunId: 'r', root: { name: 'p' }, status: 1, statusLabel: 'running', at: 't' },
      'root.dagRunId',
    ],
  ];

  test.each(cases)('%s', (_name, schema, value, path) => {
    expect(firstErrorPath(schema, value)).toBe(path);
  });

  // The status ints and labels have their own table test (run-status.test.ts).
  test("run events go out on the prefix's channel", () => {
    expect(runEventsChannel('dagu')).toBe('dagu:events:runs');
  });
});
