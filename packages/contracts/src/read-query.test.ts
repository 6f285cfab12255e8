import {
  DagsQuerySchema,
  ForeachItemsQuerySchema,
  READ_QUERY_TABLE,
  RunLogsQuerySchema,
  RunsQuerySchema,
  StepLogQuerySchema,
  WikiQuerySchema,
  isQueryTarget,
  type QueryTarget,
} from './read-query';
import { appendQueryText, formatReadQuery } from './read-query-format';
import { caughtDaguError } from '../test-fixtures/dagu-error-of';
import { parseReadQuery } from './read-query-parse';

describe('parseReadQuery: valid queries (spec 021 "Query handling" table)', () => {
  const cases: Array<[QueryTarget, string, unknown]> = [
    ['dags', 'page=1&perPage=200', { page: 1, perPage: 200 }],
    ['dags', 'name=nightly&sort=nextRun&order=desc', { name: 'nightly', sort: 'nextRun', order: 'desc' }],
    ['dags', 'labels=team%3Dops,%20prod', { labels: ['team=ops', 'prod'] }],
    ['dags', 'name=a+b', { name: 'a b' }],
    ['dags', 'name=a%2Bb', { name: 'a+b' }],
    ['dags', 'page=007', { page: 7 }],
    ['dags', 'na%6De=x', { name: 'x' }],
    ['runs', 'name=n&dagRunId=latest&cursor=abc%3D%3D', { name: 'n', dagRunId: 'latest', cursor: 'abc==' }],
    ['runs', 'status=0&status=8&status=0', { status: [0, 8, 0] }],
    ['runs', 'fromDate=0&toDate=1767225600&limit=500', { fromDate: 0, toDate: 1767225600, limit: 500 }],
    ['runs', 'labels=a', { labels: ['a'] }],
    ['wiki', 'flat=false&sort=type&page=3&perPage=1', { flat: false, sort: 'type', page: 3, perPage: 1 }],
    ['wiki', 'prefix=guides/in', { prefix: 'guides/in' }],
    ['wiki', 'prefix=guides%2F', { prefix: 'guides/' }],
    ['run_logs', 'tail=10000', { tail: 10000 }],
    ['step_log', 'head=1&stream=stdout', { head: 1, stream: 'stdout' }],
    ['step_log', 'limit=20', { limit: 20 }],
    ['step_log', 'offset=5&limit=20', { offset: 5, limit: 20 }],
    ['step_log', 'limit=20&offset=5', { offset: 5, limit: 20 }],
    [
      'foreach_items',
      'parent=fan%5B1%5D.inner&status=not_started&perPage=500',
      { parent: 'fan[1].inner', status: 'not_started', perPage: 500 },
    ],
  ];

  it.each(cases)('%s ? %s', (target, query, expected) => {
    expect(parseReadQuery(target, query, 'target')).toStrictEqual(expected);
    expect(parseReadQuery(target, query, 'uri')).toStrictEqual(expected);
  });

  it('treats an empty query as absent', () => {
    expect(parseReadQuery('dags', '', 'target')).toBeUndefined();
    expect(parseReadQuery('step_log', '', 'uri')).toBeUndefined();
  });
});

describe('parseReadQuery: invalid queries', () => {
  const cases: Array<[QueryTarget, string, string | null]> = [
    ['dags', 'page=0', 'page'],
    ['dags', 'page=-1', 'page'],
    ['dags', 'page=1.5', 'page'],
    ['dags', 'page=1e3', 'page'],
    ['dags', 'page=+1', 'page'],
    ['dags', 'page=99999999999999999999', 'page'],
    ['dags', 'perPage=201', 'perPage'],
    ['dags', 'sort=nextrun', 'sort'],
    ['dags', 'order=up', 'order'],
    ['dags', 'labels=a,', 'labels'],
    ['dags', 'labels=%20', 'labels'],
    ['dags', 'status=1', 'status'],
    ['dags', 'name=', 'name'],
    ['dags', 'name=a&name=b', 'name'],
    ['dags', 'name=%E0%A4%A', 'name'],
    ['dags', 'name=a b', 'name'],
    ['dags', 'name=a&&page=1', null],
    ['dags', '&', null],
    ['dags', '=x', null],
    ['dags', '%zz=x', null],
    ['dags', 'toString=1', 'toString'],
    ['dags', '__proto__=1', '__proto__'],
    ['runs', 'status=9', 'status'],
    ['runs', 'status=1&status=x', 'status'],
    ['runs', 'fromDate=-5', 'fromDate'],
    ['runs', 'limit=0', 'limit'],
    ['runs', 'cursor=a&cursor=b', 'cursor'],
    ['runs', 'page=1', 'page'],
    ['wiki', 'flat=yes', 'flat'],
    ['wiki', 'sort=date', 'sort'],
    ['wiki', 'prefix=/guides', 'prefix'],
    ['wiki', 'prefix=a/../b', 'prefix'],
    ['wiki', 'prefix=a//b', 'prefix'],
    ['run_logs', 'tail=10001', 'tail'],
    ['run_logs', 'head=1', 'head'],
    ['step_log', 'offset=0', 'offset'],
    ['step_log', 'stream=both', 'stream'],
    ['step_log', 'tail=1&head=1', null],
    ['step_log', 'tail=1&offset=1', null],
    ['step_log', 'limit=1&tail=1', null],
    ['step_log', 'limit=1&head=1', null],
    ['foreach_items', 'status=done', 'status'],
    ['foreach_items', 'status=failed&status=aborted', 'status'],
    ['foreach_items', 'perPage=501', 'perPage'],
  ];

  it.each(cases)('%s ? %s', (target, query, parameter) => {
    const inTarget = caughtDaguError(() => parseReadQuery(target, query, 'target'));
    expect([inTarget.code, inTarget.field]).toEqual(['invalid_tool_input', 'query']);
    const inUri = caughtDaguError(() => parseReadQuery(target, query, 'uri'));
    expect([inUri.code, inUri.field]).toEqual(['invalid_resource_uri', 'uri']);
    if (parameter === null) expect(inUri.details).toBeUndefined();
    else expect(inUri.details).toEqual({ parameter });
  });

  it('refuses a leading "?" in target mode (spec 021 "Query handling")', () => {
    const error = caughtDaguError(() => parseReadQuery('dags', '?page=1', 'target'));
    expect([error.code, error.field]).toEqual(['invalid_tool_input', 'query']);
  });

  it('refuses a target that takes no query, even when called untyped', () => {
    expect(isQueryTarget('run')).toBe(false);
    const error = caughtDaguError(() => Reflect.apply(parseReadQuery, undefined, ['run', 'x=1', 'target']));
    expect([error.code, error.field]).toEqual(['invalid_tool_input', 'query']);
  });
});

describe('formatReadQuery and appendQueryText', () => {
  it('writes the canonical order and encoding', () => {
    expect(formatReadQuery('dags', { order: 'asc', name: 'a b&c', page: 1 })).toBe('page=1&name=a%20b%26c&order=asc');
    expect(formatReadQuery('runs', { labels: ['x', 'y'], status: [4, 2] })).toBe('status=4&status=2&labels=x,y');
    expect(formatReadQuery('wiki', { flat: true, prefix: 'a/' })).toBe('flat=true&prefix=a%2F');
    expect(formatReadQuery('step_log', { offset: 3, limit: 2 })).toBe('offset=3&limit=2');
    expect(formatReadQuery('dags', {})).toBe('');
    expect(formatReadQuery('dags', undefined)).toBe('');
  });

  it('round-trips through parseReadQuery', () => {
    const query = { name: 'ü=?&', labels: ['a', 'b c'], sort: 'name' as const };
    expect(parseReadQuery('dags', formatReadQuery('dags', query), 'uri')).toStrictEqual(query);
  });

  it('appends the supplied query text as given (spec 021 target contracts)', () => {
    expect(appendQueryText('dagu://runs/n/r/logs', 'tail=100')).toBe('dagu://runs/n/r/logs?tail=100');
    expect(appendQueryText('dagu://dags', 'perPage=20&name=nightly')).toBe('dagu://dags?perPage=20&name=nightly');
    expect(appendQueryText('dagu://dags', '')).toBe('dagu://dags');
    expect(appendQueryText('dagu://dags', undefined)).toBe('dagu://dags');
  });
});

describe('READ_QUERY_TABLE', () => {
  const schemas = {
    dags: DagsQuerySchema,
    runs: RunsQuerySchema,
    wiki: WikiQuerySchema,
    run_logs: RunLogsQuerySchema,
    step_log: StepLogQuerySchema,
    foreach_items: ForeachItemsQuerySchema,
  };

  it.each(Object.entries(schemas))('lists exactly the parameters of the %s schema', (target, schema) => {
    if (!isQueryTarget(target)) throw new Error(`${target} is not a query target`);
    expect(READ_QUERY_TABLE[target].schema).toBe(schema);
    expect(Object.keys(READ_QUERY_TABLE[target].params).sort()).toEqual(Object.keys(schema.shape).sort());
  });

  it('validates parsed queries off the bus with the same rules', () => {
    expect(StepLogQuerySchema.safeParse({ tail: 5, head: 5 }).success).toBe(false);
    expect(StepLogQuerySchema.safeParse({ limit: 5 }).success).toBe(true);
    expect(StepLogQuerySchema.safeParse({ tail: 5, extra: 1 }).success).toBe(false);
    expect(RunsQuerySchema.safeParse({ status: [] }).success).toBe(false);
    expect(DagsQuerySchema.safeParse({ labels: [''] }).success).toBe(false);
  });
});
