import { checkChange, checkExecute, checkRead, describeRestrictions, labelMatches } from './restrictions';

const labels = (map: Record<string, string[]>) => async (name: string) => map[name];

describe('agent restrictions', () => {
  it('matches label selectors: key=value exactly, a bare key as key or key=…', () => {
    expect(labelMatches('team=billing', 'team=billing')).toBe(true);
    expect(labelMatches('team=billing', 'team=billing2')).toBe(false);
    expect(labelMatches('team', 'team=hr')).toBe(true);
    expect(labelMatches('team', 'team')).toBe(true);
    expect(labelMatches('team', 'teams=x')).toBe(false);
  });

  it('dagu_read: targets, DAG-wide targets, DAG names, wiki workspaces', async () => {
    const r = { targets: ['dag', 'runs', 'wiki_page'], dags: ['a'], wikiWorkspaces: ['ops'] };
    const none = labels({});
    expect((await checkRead({ target: 'dag_spec', name: 'a' }, r, none))?.details).toMatchObject({
      restriction: 'targets',
    });
    expect((await checkRead({ target: 'runs' }, r, none))?.details).toMatchObject({ restriction: 'dags' });
    expect((await checkRead({ target: 'dag', name: 'b' }, r, none))?.details).toMatchObject({ restriction: 'dags' });
    expect(await checkRead({ target: 'dag', name: 'a' }, r, none)).toBeUndefined();
    expect(await checkRead({ uri: 'dagu://dags/a' }, r, none)).toBeUndefined();
    expect((await checkRead({ target: 'wiki_page', workspace: 'hr', path: 'x' }, r, none))?.details).toMatchObject({
      restriction: 'wikiWorkspaces',
    });
    // Input the tool itself refuses passes unchecked (the tool answers invalid_tool_input).
    expect(await checkRead({ target: 'dag' }, r, none)).toBeUndefined();
  });

  it('dagu_execute: actions, dag labels, inline YAML under a DAG restriction', async () => {
    const r = { actions: ['start' as const], dagLabels: ['team=billing'] };
    const lookup = labels({ pay: ['team=billing'], hr: ['team=hr'] });
    expect(await checkExecute({ action: 'start', name: 'pay' }, r, lookup)).toBeUndefined();
    expect((await checkExecute({ action: 'start', name: 'hr' }, r, lookup))?.details).toMatchObject({
      restriction: 'dagLabels',
    });
    expect((await checkExecute({ action: 'stop', name: 'pay', dagRunId: 'r1' }, r, lookup))?.details).toMatchObject({
      restriction: 'actions',
    });
    expect((await checkExecute({ action: 'start', name: 'x', spec: 'steps: []' }, r, lookup))?.message).toContain(
      'inline YAML',
    );
  });

  it('dagu_change: modes', async () => {
    const r = { changeModes: ['preview' as const] };
    expect((await checkChange({ mode: 'apply', name: 'a', spec: 'steps: []' }, r, labels({})))?.details).toMatchObject({
      restriction: 'changeModes',
      allowed: ['preview'],
    });
    expect(await checkChange({ name: 'a', spec: 'steps: []' }, r, labels({}))).toBeUndefined();
  });

  it('states the restrictions in one sentence', () => {
    expect(describeRestrictions({})).toBe('');
    expect(describeRestrictions({ actions: ['start'], dags: ['a', 'b'] })).toBe(
      ' Restricted to actions: start; DAGs: a, b.',
    );
  });
});
