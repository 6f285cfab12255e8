import fc from 'fast-check';
import { DaguError } from './errors';
import type { QueryTarget, ReadQueryMap } from './read-query';
import { formatReadQuery } from './read-query-format';
import { parseReadQuery } from './read-query-parse';
import { parseDaguUri } from './uri';
import { encodePathSegment } from './uri-escape';
import { formatDaguUri } from './uri-format';
import type { DaguResource } from './uri-resource';

// ---- arbitraries of valid values (dagu-model §2) ----------------------------

/** Characters that must be escaped, biased in so every run exercises them. */
const reservedChar = fc.constantFrom(
  '/',
  '?',
  '#',
  '%',
  '&',
  '=',
  '+',
  ' ',
  '.',
  ',',
  ':',
  '@',
  '!',
  "'",
  '*',
  'é',
  '😀',
);
/** Any text of 1..max code points: full Unicode, or reserved-heavy. */
const text = (max: number) =>
  fc.oneof(
    fc.string({ unit: 'binary', minLength: 1, maxLength: max }),
    fc.string({ unit: fc.oneof(reservedChar, fc.constantFrom('a', 'Z', '0')), minLength: 1, maxLength: max }),
    fc.constantFrom('.', '..', 'logs', 'sub', 'steps', 'foreach', 'spec'),
  );
const dagName = fc.stringMatching(/^[a-zA-Z0-9_.-]{1,40}$/).filter((n) => n !== '.' && n !== '..');
const wikiWorkspace = fc.stringMatching(/^[a-z0-9][a-z0-9_-]{0,63}$/);
const dagRunId = fc.stringMatching(/^[-a-zA-Z0-9_]{1,64}$/);
const stepName = text(255);
const item = fc.oneof(
  fc.nat().map(String),
  fc.tuple(text(20), fc.nat()).map(([parent, index]) => `${parent}.${index}`),
);
const wikiSegment = fc.stringMatching(/^[A-Za-z0-9._-]{1,12}$/).filter((s) => s !== '.' && s !== '..');
const wikiPath = fc.array(wikiSegment, { minLength: 1, maxLength: 4 }).map((parts) => parts.join('/'));
const label = fc
  .string({ unit: 'binary', minLength: 1, maxLength: 10 })
  .map((s) => s.replace(/,/g, '').trim())
  .filter((s) => s !== '');
const int = (min: number, max: number) => fc.integer({ min, max });
const opt = { requiredKeys: [], noNullPrototype: true };

/** A valid parsed query per target (spec 021 table). */
const queries: { [K in QueryTarget]: fc.Arbitrary<ReadQueryMap[K]> } = {
  dags: fc.record(
    {
      page: int(1, 1e9),
      perPage: int(1, 200),
      name: text(20),
      labels: fc.array(label, { minLength: 1, maxLength: 3 }),
      sort: fc.constantFrom('name', 'nextRun'),
      order: fc.constantFrom('asc', 'desc'),
    },
    opt,
  ),
  runs: fc.record(
    {
      name: text(20),
      dagRunId: text(20),
      status: fc.array(int(0, 8), { minLength: 1, maxLength: 3 }),
      fromDate: int(0, 2 ** 40),
      toDate: int(0, 2 ** 40),
      limit: int(1, 500),
      cursor: text(20),
      labels: fc.array(label, { minLength: 1, maxLength: 3 }),
    },
    opt,
  ),
  wiki: fc.record(
    {
      page: int(1, 1e9),
      perPage: int(1, 200),
      flat: fc.boolean(),
      sort: fc.constantFrom('name', 'type', 'mtime'),
      order: fc.constantFrom('asc', 'desc'),
      prefix: fc.oneof(
        wikiPath,
        wikiPath.map((p) => `${p}/`),
      ),
    },
    opt,
  ),
  run_logs: fc.record({ tail: int(1, 10000) }, opt),
  step_log: fc
    .tuple(
      fc.oneof(
        fc.constant({}),
        int(1, 10000).map((tail) => ({ tail })),
        int(1, 10000).map((head) => ({ head })),
        int(1, 10000).map((limit) => ({ limit })),
        fc.record({ offset: int(1, 1e9), limit: int(1, 10000) }, { requiredKeys: ['offset'], noNullPrototype: true }),
      ),
      fc.record({ stream: fc.constantFrom('stdout', 'stderr') }, opt),
    )
    .map(([range, stream]) => ({ ...range, ...stream })),
  foreach_items: fc.record(
    {
      parent: text(20),
      status: fc.constantFrom('not_started', 'running', 'succeeded', 'failed', 'aborted'),
      page: int(1, 1e9),
      perPage: int(1, 500),
    },
    opt,
  ),
};

/** `{query}` when the query has a parameter, else `{}` (an empty query is absent). */
const queryPart = <K extends QueryTarget>(target: K) =>
  fc
    .option(queries[target], { nil: undefined })
    .map((query) => (query === undefined || Object.keys(query).length === 0 ? {} : { query }));

const run = fc.record(
  { name: dagName, dagRunId, subRunId: dagRunId },
  { requiredKeys: ['name', 'dagRunId'], noNullPrototype: true },
);
const step = fc.tuple(run, stepName).map(([r, s]) => ({ ...r, stepName: s }));

const resource: fc.Arbitrary<DaguResource> = fc.oneof(
  fc.constant({ kind: 'references' as const }),
  text(40).map((topic) => ({ kind: 'reference' as const, topic })),
  queryPart('dags').map((q) => ({ kind: 'dags' as const, ...q })),
  dagName.map((name) => ({ kind: 'dag_spec' as const, name })),
  queryPart('runs').map((q) => ({ kind: 'runs' as const, ...q })),
  run.map((r) => ({ kind: 'run' as const, ...r })),
  fc
    .tuple(dagName, dagRunId, queryPart('run_logs'))
    .map(([name, id, q]) => ({ kind: 'run_logs' as const, name, dagRunId: id, ...q })),
  fc.tuple(step, queryPart('step_log')).map(([s, q]) => ({ kind: 'step_log' as const, ...s, ...q })),
  fc
    .tuple(step, item, stepName, queryPart('step_log'))
    .map(([s, i, body, q]) => ({ kind: 'step_log' as const, ...s, item: i, bodyStepName: body, ...q })),
  fc.tuple(step, queryPart('foreach_items')).map(([s, q]) => ({ kind: 'foreach_items' as const, ...s, ...q })),
  fc.tuple(step, item).map(([s, i]) => ({ kind: 'foreach_item' as const, ...s, item: i })),
  queryPart('wiki').map((q) => ({ kind: 'wiki' as const, ...q })),
  fc.tuple(wikiWorkspace, queryPart('wiki')).map(([workspace, q]) => ({ kind: 'wiki' as const, workspace, ...q })),
  fc
    .tuple(
      wikiWorkspace.filter((w) => w !== 'all'),
      // A page path never ends in `.md` (dagu-model §2: pages are stored without it).
      wikiPath.filter((p) => !p.toLowerCase().endsWith('.md')),
    )
    .map(([workspace, path]) => ({ kind: 'wiki_page' as const, workspace, path })),
);

function errorOf(fn: () => unknown): DaguError | undefined {
  try {
    fn();
    return undefined;
  } catch (error) {
    if (error instanceof DaguError) return error;
    throw error;
  }
}

// ---- properties --------------------------------------------------------------

/** Cases per property: `PROPERTY_RUNS` (the fault suite runs 10,000), else 1,000. */
const RUNS = Number(process.env.PROPERTY_RUNS ?? 1000);

describe('dagu:// codec properties', () => {
  it('round-trips every valid resource: parse(format(x)) deep-equals x', () => {
    fc.assert(
      fc.property(resource, (r) => {
        expect(parseDaguUri(formatDaguUri(r))).toStrictEqual(r);
      }),
      { numRuns: RUNS },
    );
  });

  it('formats only RFC 3986 characters, so the output is ASCII and canonical', () => {
    fc.assert(
      fc.property(resource, (r) => {
        const uri = formatDaguUri(r);
        expect(uri).toMatch(/^dagu:\/\/[a-z]+(\/[A-Za-z0-9\-._~%]+)*(\?[A-Za-z0-9\-._~%=&,]+)?$/);
        expect(formatDaguUri(parseDaguUri(uri))).toBe(uri);
      }),
    );
  });

  it('round-trips every valid query: parseReadQuery(formatReadQuery(q)) deep-equals q', () => {
    const targets = fc.constantFrom<QueryTarget>('dags', 'runs', 'wiki', 'run_logs', 'step_log', 'foreach_items');
    fc.assert(
      fc.property(
        targets.chain((t) => queries[t].map((q) => [t, q] as const)),
        ([target, query]) => {
          const textForm = formatReadQuery(target, query);
          const expected = Object.keys(query).length === 0 ? undefined : query;
          expect(parseReadQuery(target, textForm, 'target')).toStrictEqual(expected);
        },
      ),
    );
  });

  it('accepts the scheme in any letter case (RFC 3986 §3.1)', () => {
    const scheme = fc
      .tuple(fc.boolean(), fc.boolean(), fc.boolean(), fc.boolean())
      .map((caps) => [...'dagu'].map((c, i) => (caps[i] ? c.toUpperCase() : c)).join(''));
    fc.assert(
      fc.property(resource, scheme, (r, s) => {
        expect(parseDaguUri(formatDaguUri(r).replace(/^dagu/, s))).toStrictEqual(r);
      }),
    );
  });
});

describe('dagu:// error properties (spec 020 "Errors", dagu-model §10)', () => {
  const expectError = (uri: string, code: string, details?: Record<string, unknown>) => {
    const error = errorOf(() => parseDaguUri(uri));
    expect(error?.code).toBe(code);
    expect(error?.field).toBe('uri');
    if (details !== undefined) expect(error?.details).toEqual(details);
  };
  /** A token that is malformed wherever it lands: bad hex, a never-valid byte, or a cut UTF-8 sequence. */
  const malformed = fc.constantFrom(
    '%zz',
    '%g0',
    '%-1',
    '%FF',
    '%C0%AF',
    '%E0%A4x',
    '%ED%A0%80',
    '%F5%80%80%80',
    ' ',
    'é',
    '"',
  );
  /** A URI without query, and the index where its path starts (just after `dagu://host`). */
  const bare = resource.map((r) => {
    const uri = formatDaguUri(r).split('?')[0] ?? '';
    return { uri, pathStart: uri.indexOf('/', 'dagu://'.length) };
  });

  it('refuses a malformed escape or raw character anywhere in the path', () => {
    fc.assert(
      fc.property(bare, malformed, fc.nat(), ({ uri, pathStart }, token, at) => {
        const cut = pathStart + 1 + (at % (uri.length - pathStart));
        const bad = pathStart === -1 ? `${uri}/${token}` : `${uri.slice(0, cut)}${token}${uri.slice(cut)}`;
        expectError(bad, 'invalid_resource_uri', { part: 'path' });
      }),
    );
  });

  it('refuses a malformed escape in a query value', () => {
    const target = fc.constantFrom(
      'dagu://dags?name=',
      'dagu://runs?cursor=',
      'dagu://wiki?prefix=',
      'dagu://widgets?x=',
    );
    fc.assert(
      fc.property(target, malformed, (prefix, token) => {
        expectError(`${prefix}a${token}`, 'invalid_resource_uri');
      }),
    );
  });

  it('answers unsupported_resource for a well-formed URI with an unknown host', () => {
    const families = ['reference', 'dags', 'runs', 'wiki'];
    const host = fc.stringMatching(/^[A-Za-z][A-Za-z0-9.-]{0,15}$/).filter((h) => !families.includes(h));
    const path = fc
      .array(text(10).map(encodePathSegment), { maxLength: 3 })
      .map((segs) => segs.map((s) => `/${s}`).join(''));
    fc.assert(
      fc.property(host, path, fc.option(fc.constant('?a=1'), { nil: '' }), (h, p, q) => {
        expectError(`dagu://${h}${p}${q}`, 'unsupported_resource');
      }),
    );
  });

  it('refuses a trailing slash on any resource', () => {
    fc.assert(fc.property(bare, ({ uri }) => expectError(`${uri}/`, 'invalid_resource_uri', { part: 'path' })));
  });

  it('refuses extra segments after a terminal resource', () => {
    const terminal = bare.filter(({ uri }) => /^dagu:\/\/(reference\/|dags\/|wiki\/[^/]+\/)|\/logs$/.test(uri));
    const extra = fc.array(text(10).map(encodeURIComponent), { minLength: 1, maxLength: 3 });
    fc.assert(
      fc.property(terminal, extra, ({ uri }, segs) => {
        expectError(`${uri}/${segs.join('/')}`, 'invalid_resource_uri', { part: 'path' });
      }),
    );
  });

  it('refuses every dagu://dags path but {name}/spec, and any bad segment after a run', () => {
    const segs = fc.array(text(10), { minLength: 1, maxLength: 4 });
    const enc = (parts: string[]) => parts.map((s) => `/${encodeURIComponent(s)}`).join('');
    fc.assert(
      fc.property(segs, (parts) => {
        fc.pre(!(parts.length === 2 && parts[1] === 'spec' && /^[a-zA-Z0-9_.-]{1,40}$/.test(parts[0] ?? '')));
        fc.pre(!parts.some((p) => p === '.' || p === '..'));
        expectError(`dagu://dags${enc(parts)}`, 'invalid_resource_uri');
      }),
    );
    fc.assert(
      fc.property(run, text(10), (r, seg) => {
        fc.pre(seg !== '.' && seg !== '..' && !(seg === 'logs' && r.subRunId === undefined));
        expectError(`${formatDaguUri({ kind: 'run', ...r })}/${encodeURIComponent(seg)}`, 'invalid_resource_uri');
      }),
    );
  });

  it('refuses any query on a kind that takes none, and unknown parameters on one that does', () => {
    const param = fc.stringMatching(/^[a-z]{1,8}$/);
    fc.assert(
      fc.property(resource, param, (r, key) => {
        const base = formatDaguUri(r).split('?')[0] ?? '';
        const takesQuery = ['dags', 'runs', 'wiki', 'run_logs', 'step_log', 'foreach_items'].includes(r.kind);
        if (!takesQuery) expectError(`${base}?${key}=1`, 'invalid_resource_uri', { part: 'query' });
        else expectError(`${base}?zz${key}=1`, 'invalid_resource_uri', { parameter: `zz${key}` });
      }),
    );
  });
});
