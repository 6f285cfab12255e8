import type { WikiTreeNode } from '@dagu-mcp/contracts';
import { buildPageTree } from './page-tree';
import type { PageEntryRecord } from './page.records';

function record(workspace: string, path: string, minute: number): PageEntryRecord {
  return {
    workspace,
    path,
    title: `T ${path}`,
    tags: ['x'],
    size: 10,
    version: 2,
    updatedAt: new Date(Date.UTC(2026, 0, 1, 0, minute)),
  };
}

/** `type:id` of every node, nested as arrays: a compact picture of a tree. */
function shape(nodes: readonly WikiTreeNode[]): unknown[] {
  return nodes.map((n) => (n.type === 'file' ? n.id : { [`${n.type}:${n.id}`]: shape(n.children) }));
}

describe('buildPageTree (spec 021 Wiki collection, tree mode)', () => {
  const records = [
    record('team', 'runbooks/deploy', 5),
    record('team', 'runbooks/db/restore', 1),
    record('team', 'readme', 9),
    record('ops', 'oncall', 3),
  ];

  test('one workspace: folders nested by segment, pages as leaves with canonical URIs (dagu-model §2)', () => {
    const tree = buildPageTree(records.slice(0, 3), { allWorkspaces: false, sort: 'type', order: 'asc' });
    expect(shape(tree)).toEqual([
      { 'directory:runbooks': [{ 'directory:runbooks/db': ['runbooks/db/restore'] }, 'runbooks/deploy'] },
      'readme',
    ]);
    const folder = tree[0];
    if (folder?.type !== 'directory') throw new Error('expected a directory first');
    expect(folder).toMatchObject({
      id: 'runbooks',
      name: 'runbooks',
      workspace: 'team',
      updatedAt: '2026-01-01T00:05:00.000Z',
    });
    const deploy = folder.children[1];
    expect(deploy).toEqual({
      type: 'file',
      id: 'runbooks/deploy',
      name: 'deploy',
      workspace: 'team',
      uri: 'dagu://wiki/team/runbooks%2Fdeploy',
      title: 'T runbooks/deploy',
      tags: ['x'],
      size: 10,
      version: 2,
      updatedAt: '2026-01-01T00:05:00.000Z',
    });
  });

  test('every workspace: one workspace node on top, with its collection URI', () => {
    const tree = buildPageTree(records, { allWorkspaces: true, sort: 'name', order: 'asc' });
    expect(shape(tree)).toEqual([
      { 'workspace:ops': ['oncall'] },
      {
        'workspace:team': [
          'readme',
          { 'directory:runbooks': [{ 'directory:runbooks/db': ['runbooks/db/restore'] }, 'runbooks/deploy'] },
        ],
      },
    ]);
    expect(tree[1]).toMatchObject({
      type: 'workspace',
      id: 'team',
      uri: 'dagu://wiki/team',
      updatedAt: '2026-01-01T00:09:00.000Z',
    });
  });

  test('mtime orders by the newest page below a node; desc reverses', () => {
    const asc = buildPageTree(records.slice(0, 3), { allWorkspaces: false, sort: 'mtime', order: 'asc' });
    expect(shape(asc)).toEqual([
      { 'directory:runbooks': [{ 'directory:runbooks/db': ['runbooks/db/restore'] }, 'runbooks/deploy'] },
      'readme',
    ]);
    const desc = buildPageTree(records.slice(0, 3), { allWorkspaces: false, sort: 'mtime', order: 'desc' });
    expect(shape(desc)).toEqual([
      'readme',
      { 'directory:runbooks': ['runbooks/deploy', { 'directory:runbooks/db': ['runbooks/db/restore'] }] },
    ]);
  });

  test('a page and a folder of the same name are both kept', () => {
    const tree = buildPageTree([record('w', 'a', 1), record('w', 'a/b', 2)], {
      allWorkspaces: false,
      sort: 'name',
      order: 'asc',
    });
    expect(shape(tree)).toEqual(['a', { 'directory:a': ['a/b'] }]);
  });

  test('no pages, no nodes', () => {
    expect(buildPageTree([], { allWorkspaces: true, sort: 'type', order: 'asc' })).toEqual([]);
  });
});
