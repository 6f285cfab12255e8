import type { z } from 'zod';
import { firstErrorPath } from '../test-fixtures/first-error-path';
import {
  DagChangeRequestSchema,
  DagDetailSchema,
  DagListReplySchema,
  DagListRequestSchema,
  DagNameRequestSchema,
  DagSchedulesRequestSchema,
  DagSearchReplySchema,
  DagSearchRequestSchema,
  DagSpecReplySchema,
  DagSuspendRequestSchema,
  DagUpsertReplySchema,
  DagValidationSchema,
} from './dag';

/** The path of the first issue, dotted (`''` for the whole value), or `null` when the value is valid. */
const summary = {
  name: 'nightly',
  uri: 'dagu://dags/nightly',
  suspended: false,
  labels: [],
  schedule: ['0 1 * * *'],
  updatedAt: 't',
};
const detail = {
  name: 'nightly',
  specUri: 'dagu://dags/nightly/spec',
  suspended: false,
  labels: ['team=a'],
  schedule: [],
  version: 3,
  createdAt: 't',
  updatedAt: 't',
  dag: { steps: [] },
};

describe('dag contracts (022 change, 021 DAG models, dagu-model §2 names)', () => {
  const cases: Array<[string, z.ZodType, unknown, string | null]> = [
    ['change: name and spec', DagChangeRequestSchema, { name: 'nightly', spec: 'steps: []' }, null],
    ['change: name of 40 characters', DagChangeRequestSchema, { name: 'n'.repeat(40), spec: 'x' }, null],
    ['change: name of 41 characters', DagChangeRequestSchema, { name: 'n'.repeat(41), spec: 'x' }, 'name'],
    ['change: empty name', DagChangeRequestSchema, { name: '', spec: 'x' }, 'name'],
    ['change: empty spec', DagChangeRequestSchema, { name: 'a', spec: '' }, 'spec'],
    ['change: spec not a string', DagChangeRequestSchema, { name: 'a', spec: { steps: [] } }, 'spec'],
    ['change: unknown key', DagChangeRequestSchema, { name: 'a', spec: 'x', mode: 'apply' }, ''],
    ['validation: valid with a dag', DagValidationSchema, { valid: true, errors: [], dag: { name: 'a' } }, null],
    ['validation: errors not strings', DagValidationSchema, { valid: false, errors: [1] }, 'errors.0'],
    [
      'upsert reply: applied and created at version 1',
      DagUpsertReplySchema,
      { valid: true, errors: [], applied: true, created: true, version: 1 },
      null,
    ],
    [
      'upsert reply: version 0',
      DagUpsertReplySchema,
      { valid: true, errors: [], applied: true, version: 0 },
      'version',
    ],
    ['upsert reply: missing applied', DagUpsertReplySchema, { valid: true, errors: [] }, 'applied'],
    ['list: empty (defaults)', DagListRequestSchema, {}, null],
    [
      'list: whole query',
      DagListRequestSchema,
      { page: 2, perPage: 200, name: 'night', labels: ['a=b'], sort: 'nextRun', order: 'desc' },
      null,
    ],
    ['list: page 0', DagListRequestSchema, { page: 0 }, 'page'],
    ['list: perPage 201', DagListRequestSchema, { perPage: 201 }, 'perPage'],
    ['list: fractional page', DagListRequestSchema, { page: 1.5 }, 'page'],
    ['list: bad sort', DagListRequestSchema, { sort: 'updatedAt' }, 'sort'],
    ['list: empty label', DagListRequestSchema, { labels: [''] }, 'labels.0'],
    ['list: unknown key', DagListRequestSchema, { search: 'x' }, ''],
    [
      'list reply: one item',
      DagListReplySchema,
      { items: [summary], pagination: { page: 1, perPage: 50, total: 1, totalPages: 1 } },
      null,
    ],
    [
      'list reply: item without uri',
      DagListReplySchema,
      { items: [{ ...summary, uri: undefined }], pagination: { page: 1, perPage: 50, total: 1, totalPages: 1 } },
      'items.0.uri',
    ],
    ['list reply: missing pagination', DagListReplySchema, { items: [] }, 'pagination'],
    ['name: valid', DagNameRequestSchema, { name: 'nightly' }, null],
    ['name: missing', DagNameRequestSchema, {}, 'name'],
    ['name: extra key', DagNameRequestSchema, { name: 'a', spec: 'x' }, ''],
    ['detail: full', DagDetailSchema, detail, null],
    ['detail: fractional version', DagDetailSchema, { ...detail, version: 1.5 }, 'version'],
    ['detail: dag not an object', DagDetailSchema, { ...detail, dag: 'steps: []' }, 'dag'],
    ['spec reply: YAML', DagSpecReplySchema, { name: 'a', mimeType: 'application/yaml', spec: 'x', errors: [] }, null],
    [
      'spec reply: other mime type',
      DagSpecReplySchema,
      { name: 'a', mimeType: 'text/plain', spec: 'x', errors: [] },
      'mimeType',
    ],
    ['search: all options', DagSearchRequestSchema, { search: 'echo', workspace: 'ops', cursor: 'c', limit: 50 }, null],
    ['search: empty search', DagSearchRequestSchema, { search: '' }, 'search'],
    ['search: limit 51', DagSearchRequestSchema, { search: 'x', limit: 51 }, 'limit'],
    ['search: limit 0', DagSearchRequestSchema, { search: 'x', limit: 0 }, 'limit'],
    ['search: empty cursor', DagSearchRequestSchema, { search: 'x', cursor: '' }, 'cursor'],
    [
      'search reply: a match on line 1',
      DagSearchReplySchema,
      { results: [{ name: 'a', uri: 'u', matches: [{ line: 1, text: 'x' }], hasMoreMatches: false }], hasMore: false },
      null,
    ],
    [
      'search reply: line 0',
      DagSearchReplySchema,
      { results: [{ name: 'a', uri: 'u', matches: [{ line: 0, text: 'x' }], hasMoreMatches: false }], hasMore: false },
      'results.0.matches.0.line',
    ],
    ['suspend: valid', DagSuspendRequestSchema, { name: 'a', suspended: true }, null],
    ['suspend: not a boolean', DagSuspendRequestSchema, { name: 'a', suspended: 'yes' }, 'suspended'],
    ['schedules: all', DagSchedulesRequestSchema, {}, null],
    ['schedules: names with spec', DagSchedulesRequestSchema, { names: ['a', 'b'], withSpec: true }, null],
    ['schedules: empty names', DagSchedulesRequestSchema, { names: [] }, 'names'],
    [
      'schedules: 201 names',
      DagSchedulesRequestSchema,
      { names: Array.from({ length: 201 }, (_, i) => `d${i}`) },
      'names',
    ],
    ['schedules: a name too long', DagSchedulesRequestSchema, { names: ['n'.repeat(41)] }, 'names.0'],
  ];

  test.each(cases)('%s', (_name, schema, value, path) => {
    expect(firstErrorPath(schema, value)).toBe(path);
  });
});
