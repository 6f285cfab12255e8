import type { ErrorCode } from './errors';
import { parseDaguUri } from './uri';
import { formatDaguUri } from './uri-format';
import { caughtDaguError } from '../test-fixtures/dagu-error-of';
import type { DaguResource } from './uri-resource';

/** Runs `fn` and returns the DaguError it throws (fails the test otherwise). */
const R = 'dagu://runs/nightly-report/20260701T010000Z';

describe('parseDaguUri: valid URIs (spec 020 families, spec 021 target derivation)', () => {
  const cases: Array<[string, DaguResource]> = [
    ['dagu://reference', { kind: 'references' }],
    ['dagu://reference/authoring', { kind: 'reference', topic: 'authoring' }],
    ['dagu://reference/read-tool', { kind: 'reference', topic: 'read-tool' }],
    ['dagu://reference/a%2Fb%20c%C3%A9', { kind: 'reference', topic: 'a/b cé' }],
    ['dagu://reference/%2E%2E', { kind: 'reference', topic: '..' }],
    ['dagu://dags', { kind: 'dags' }],
    ['dagu://dags?', { kind: 'dags' }],
    ['dagu://dags?name=nightly&perPage=20', { kind: 'dags', query: { name: 'nightly', perPage: 20 } }],
    ['dagu://dags/nightly-report/spec', { kind: 'dag_spec', name: 'nightly-report' }],
    ['dagu://dags/a.b_c-1/spec', { kind: 'dag_spec', name: 'a.b_c-1' }],
    ['dagu://dags/nightly/%73pec', { kind: 'dag_spec', name: 'nightly' }],
    ['DAGU://dags', { kind: 'dags' }],
    ['Dagu://runs', { kind: 'runs' }],
    ['dagu://runs?name=nightly-report&limit=20', { kind: 'runs', query: { name: 'nightly-report', limit: 20 } }],
    ['dagu://runs?status=2&status=3', { kind: 'runs', query: { status: [2, 3] } }],
    [R, { kind: 'run', name: 'nightly-report', dagRunId: '20260701T010000Z' }],
    ['dagu://runs/a/logs', { kind: 'run', name: 'a', dagRunId: 'logs' }],
    [`${R}/logs`, { kind: 'run_logs', name: 'nightly-report', dagRunId: '20260701T010000Z' }],
    [
      `${R}/logs?tail=100`,
      { kind: 'run_logs', name: 'nightly-report', dagRunId: '20260701T010000Z', query: { tail: 100 } },
    ],
    [`${R}/sub/child-1`, { kind: 'run', name: 'nightly-report', dagRunId: '20260701T010000Z', subRunId: 'child-1' }],
    [
      `${R}/steps/build%2Fall/logs?tail=5&stream=stderr`,
      {
        kind: 'step_log',
        name: 'nightly-report',
        dagRunId: '20260701T010000Z',
        stepName: 'build/all',
        query: { tail: 5, stream: 'stderr' },
      },
    ],
    [
      `${R}/sub/c1/steps/s%20one/logs`,
      { kind: 'step_log', name: 'nightly-report', dagRunId: '20260701T010000Z', subRunId: 'c1', stepName: 's one' },
    ],
    [
      `${R}/steps/foreach/logs`,
      { kind: 'step_log', name: 'nightly-report', dagRunId: '20260701T010000Z', stepName: 'foreach' },
    ],
    [
      `${R}/steps/fan/foreach?status=failed&page=2`,
      {
        kind: 'foreach_items',
        name: 'nightly-report',
        dagRunId: '20260701T010000Z',
        stepName: 'fan',
        query: { status: 'failed', page: 2 },
      },
    ],
    [
      `${R}/steps/fan/foreach/3`,
      { kind: 'foreach_item', name: 'nightly-report', dagRunId: '20260701T010000Z', stepName: 'fan', item: '3' },
    ],
    [
      `${R}/sub/c1/steps/fan/foreach/inner.2`,
      {
        kind: 'foreach_item',
        name: 'nightly-report',
        dagRunId: '20260701T010000Z',
        subRunId: 'c1',
        stepName: 'fan',
        item: 'inner.2',
      },
    ],
    [
      `${R}/steps/fan/foreach/0/steps/body/logs?offset=10&limit=5`,
      {
        kind: 'step_log',
        name: 'nightly-report',
        dagRunId: '20260701T010000Z',
        stepName: 'fan',
        item: '0',
        bodyStepName: 'body',
        query: { offset: 10, limit: 5 },
      },
    ],
    ['dagu://wiki', { kind: 'wiki' }],
    ['dagu://wiki?flat=true&prefix=guides%2F', { kind: 'wiki', query: { flat: true, prefix: 'guides/' } }],
    ['dagu://wiki/all', { kind: 'wiki', workspace: 'all' }],
    [
      'dagu://wiki/ops?sort=mtime&order=desc',
      { kind: 'wiki', workspace: 'ops', query: { sort: 'mtime', order: 'desc' } },
    ],
    ['dagu://wiki/ops/guides%2Fintro', { kind: 'wiki_page', workspace: 'ops', path: 'guides/intro' }],
    ['dagu://wiki/ops/readme', { kind: 'wiki_page', workspace: 'ops', path: 'readme' }],
  ];

  it.each(cases)('%s', (uri, expected) => {
    expect(parseDaguUri(uri)).toStrictEqual(expected);
  });
});

describe('parseDaguUri: invalid URIs (spec 020 errors, dagu-model §10)', () => {
  const cases: Array<[string, ErrorCode, string | null]> = [
    ['', 'invalid_resource_uri', 'scheme'],
    ['dags', 'invalid_resource_uri', 'scheme'],
    ['http://dags', 'invalid_resource_uri', 'scheme'],
    ['dagux://dags', 'invalid_resource_uri', 'scheme'],
    ['dagu:dags', 'invalid_resource_uri', 'host'],
    ['dagu:/dags', 'invalid_resource_uri', 'host'],
    ['dagu://', 'invalid_resource_uri', 'host'],
    ['dagu:///dags', 'invalid_resource_uri', 'host'],
    ['dagu://user@dags', 'invalid_resource_uri', 'host'],
    ['dagu://dags:8080', 'invalid_resource_uri', 'host'],
    ['dagu://[::1]/dags', 'invalid_resource_uri', 'host'],
    ['dagu://da%zzgs', 'invalid_resource_uri', 'host'],
    ['dagu://dags#top', 'invalid_resource_uri', 'fragment'],
    ['dagu://dags#', 'invalid_resource_uri', 'fragment'],
    ['dagu://widgets', 'unsupported_resource', null],
    ['dagu://DAGS', 'unsupported_resource', null],
    ['dagu://doc/x', 'unsupported_resource', null],
    ['dagu://dags/', 'invalid_resource_uri', 'path'],
    ['dagu://reference/', 'invalid_resource_uri', 'path'],
    ['dagu://dags//spec', 'invalid_resource_uri', 'path'],
    ['dagu://reference/..', 'invalid_resource_uri', 'path'],
    ['dagu://reference/.', 'invalid_resource_uri', 'path'],
    ['dagu://reference/%zz', 'invalid_resource_uri', 'path'],
    ['dagu://reference/%E0%A4%A', 'invalid_resource_uri', 'path'],
    ['dagu://reference/%E0%A4', 'invalid_resource_uri', 'path'],
    ['dagu://reference/%C0%AF', 'invalid_resource_uri', 'path'],
    ['dagu://reference/%ED%A0%80', 'invalid_resource_uri', 'path'],
    ['dagu://reference/a%', 'invalid_resource_uri', 'path'],
    ['dagu://reference/a b', 'invalid_resource_uri', 'path'],
    ['dagu://reference/é', 'invalid_resource_uri', 'path'],
    ['dagu://widgets/%zz', 'invalid_resource_uri', 'path'],
    ['dagu://reference/a/b', 'invalid_resource_uri', 'path'],
    ['dagu://dags/nightly', 'invalid_resource_uri', 'path'],
    ['dagu://dags/nightly/yaml', 'invalid_resource_uri', 'path'],
    ['dagu://dags/nightly/spec/x', 'invalid_resource_uri', 'path'],
    ['dagu://dags/bad%20name/spec', 'invalid_resource_uri', 'name'],
    [`dagu://dags/${'a'.repeat(41)}/spec`, 'invalid_resource_uri', 'name'],
    ['dagu://dags/%2E%2E/spec', 'invalid_resource_uri', 'name'],
    ['dagu://runs/nightly', 'invalid_resource_uri', 'path'],
    ['dagu://runs/nightly/bad.id', 'invalid_resource_uri', 'dagRunId'],
    [`dagu://runs/nightly/${'1'.repeat(65)}`, 'invalid_resource_uri', 'dagRunId'],
    [`${R}/sub`, 'invalid_resource_uri', 'path'],
    [`${R}/sub/c1/logs`, 'invalid_resource_uri', 'path'],
    [`${R}/sub/c%2F1`, 'invalid_resource_uri', 'subRunId'],
    [`${R}/sub/c1/sub/c2`, 'invalid_resource_uri', 'path'],
    [`${R}/steps`, 'invalid_resource_uri', 'path'],
    [`${R}/steps/s`, 'invalid_resource_uri', 'path'],
    [`${R}/steps/s/stdout`, 'invalid_resource_uri', 'path'],
    [`${R}/steps/${'x'.repeat(256)}/logs`, 'invalid_resource_uri', 'stepName'],
    [`${R}/steps/s/foreach/abc`, 'invalid_resource_uri', 'item'],
    [`${R}/steps/s/foreach/1/steps`, 'invalid_resource_uri', 'path'],
    [`${R}/steps/s/foreach/1/steps/b`, 'invalid_resource_uri', 'path'],
    [`${R}/steps/s/foreach/1/steps/b/logs/x`, 'invalid_resource_uri', 'path'],
    [`${R}/logs/`, 'invalid_resource_uri', 'path'],
    ['dagu://wiki/bad%20ws', 'invalid_resource_uri', 'workspace'],
    ['dagu://wiki/ops/guides/intro', 'invalid_resource_uri', 'path'],
    ['dagu://wiki/ops/guides%2F', 'invalid_resource_uri', 'path'],
    ['dagu://wiki/ops/a%2F..%2Fb', 'invalid_resource_uri', 'path'],
    ['dagu://wiki/ops/a%20b', 'invalid_resource_uri', 'path'],
    ['dagu://wiki/all/readme', 'invalid_resource_uri', 'workspace'],
    ['dagu://reference?x=1', 'invalid_resource_uri', 'query'],
    ['dagu://reference/authoring?x=1', 'invalid_resource_uri', 'query'],
    ['dagu://dags/n/spec?page=1', 'invalid_resource_uri', 'query'],
    [`${R}?tail=1`, 'invalid_resource_uri', 'query'],
    [`${R}/steps/s/foreach/1?page=1`, 'invalid_resource_uri', 'query'],
    ['dagu://wiki/ops/readme?flat=true', 'invalid_resource_uri', 'query'],
    ['dagu://widgets?%zz=1', 'invalid_resource_uri', null],
  ];

  it.each(cases)('%s → %s (%s)', (uri, code, part) => {
    const error = caughtDaguError(() => parseDaguUri(uri));
    expect(error.code).toBe(code);
    expect(error.field).toBe('uri');
    if (part === null) expect(error.details?.['part']).toBeUndefined();
    else expect(error.details).toEqual({ part });
  });
});

describe('parseDaguUri: query errors carry the parameter (spec 021 "Query handling")', () => {
  const cases: Array<[string, string | null]> = [
    ['dagu://dags?perPage=201', 'perPage'],
    ['dagu://dags?page=0', 'page'],
    ['dagu://dags?sort=date', 'sort'],
    ['dagu://dags?bogus=1', 'bogus'],
    ['dagu://dags?name=a&name=b', 'name'],
    ['dagu://dags?name=', 'name'],
    ['dagu://dags?name', 'name'],
    ['dagu://dags?name=%zz', 'name'],
    ['dagu://dags?labels=a,,b', 'labels'],
    ['dagu://dags?page=1&', null],
    ['dagu://dags??page=1', '?page'],
    ['dagu://runs?status=9', 'status'],
    ['dagu://runs?status=1&limit=501', 'limit'],
    [`${R}/logs?head=1`, 'head'],
    [`${R}/steps/s/logs?tail=1&head=2`, null],
    [`${R}/steps/s/logs?limit=5&tail=2`, null],
    [`${R}/steps/s/foreach?status=2`, 'status'],
    ['dagu://wiki?prefix=%2Fabs', 'prefix'],
  ];

  it.each(cases)('%s', (uri, parameter) => {
    const error = caughtDaguError(() => parseDaguUri(uri));
    expect(error.code).toBe('invalid_resource_uri');
    expect(error.field).toBe('uri');
    if (parameter === null) expect(error.details).toBeUndefined();
    else expect(error.details).toEqual({ parameter });
  });
});

describe('formatDaguUri (spec 021 "URI path segments follow Spec 020 escaping")', () => {
  const cases: Array<[DaguResource, string]> = [
    [{ kind: 'references' }, 'dagu://reference'],
    [{ kind: 'reference', topic: "a/b c!'()*é" }, 'dagu://reference/a%2Fb%20c%21%27%28%29%2A%C3%A9'],
    [{ kind: 'reference', topic: '.' }, 'dagu://reference/%2E'],
    [{ kind: 'dags', query: {} }, 'dagu://dags'],
    [
      { kind: 'dags', query: { order: 'asc', labels: ['a b', 'team=x'], page: 2 } },
      'dagu://dags?page=2&labels=a%20b,team%3Dx&order=asc',
    ],
    [{ kind: 'dag_spec', name: 'nightly-report' }, 'dagu://dags/nightly-report/spec'],
    [{ kind: 'runs', query: { limit: 20, status: [1, 2] } }, 'dagu://runs?status=1&status=2&limit=20'],
    [{ kind: 'run', name: 'n', dagRunId: 'r', subRunId: 'c' }, 'dagu://runs/n/r/sub/c'],
    [{ kind: 'run_logs', name: 'n', dagRunId: 'r', query: { tail: 100 } }, 'dagu://runs/n/r/logs?tail=100'],
    [
      { kind: 'step_log', name: 'n', dagRunId: 'r', stepName: 's/1', item: '2', bodyStepName: 'b?' },
      'dagu://runs/n/r/steps/s%2F1/foreach/2/steps/b%3F/logs',
    ],
    [
      { kind: 'foreach_items', name: 'n', dagRunId: 'r', subRunId: 'c', stepName: 's' },
      'dagu://runs/n/r/sub/c/steps/s/foreach',
    ],
    [
      { kind: 'foreach_item', name: 'n', dagRunId: 'r', stepName: 's', item: 'p.1' },
      'dagu://runs/n/r/steps/s/foreach/p.1',
    ],
    [{ kind: 'wiki', workspace: 'ops', query: { flat: false } }, 'dagu://wiki/ops?flat=false'],
    [{ kind: 'wiki_page', workspace: 'ops', path: 'a/b' }, 'dagu://wiki/ops/a%2Fb'],
  ];

  it.each(cases)('%j → %s', (resource, uri) => {
    expect(formatDaguUri(resource)).toBe(uri);
  });
});
