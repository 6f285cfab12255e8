import { formatDaguUri, type WikiTreeNode } from '@dagu-mcp/contracts';
import { toPageEntry, type PageEntryRecord } from './page.records';

/**
 * Builds the tree of spec 021's Wiki collection (tree mode) from one page of
 * listed pages: folders nested by path segment, pages as leaves, and — when
 * every workspace is listed — one `workspace` node per workspace on top.
 *
 * Each level is ordered by the same rule PostgreSQL paged the pages by
 * (`page-keys.ts`), so the tree reads in the order of the pages it holds:
 * - `name`: by name in code-unit order; a page before a folder of the same name;
 * - `type`: folders (and workspaces) before pages, each group by name;
 * - `mtime`: by last change (a folder's is its newest page here), then by name;
 * - `desc` reverses the whole order.
 */

export type WikiSort = 'name' | 'type' | 'mtime';
export type WikiOrder = 'asc' | 'desc';

interface PageLeaf {
  kind: 'page';
  name: string;
  updatedAt: number;
  record: PageEntryRecord;
}

interface Folder {
  kind: 'directory' | 'workspace';
  id: string;
  name: string;
  workspace: string;
  updatedAt: number;
  children: Array<Folder | PageLeaf>;
  /** Sub-folders by name, to find them while building. */
  folders: Map<string, Folder>;
}

function newFolder(kind: Folder['kind'], id: string, name: string, workspace: string): Folder {
  return { kind, id, name, workspace, updatedAt: 0, children: [], folders: new Map() };
}

/** Code-unit order, as `COLLATE "C"` compares. */
function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function comparatorOf(sort: WikiSort, order: WikiOrder): (a: Folder | PageLeaf, b: Folder | PageLeaf) => number {
  const pageFirst = (a: Folder | PageLeaf, b: Folder | PageLeaf): number =>
    a.kind === b.kind ? 0 : a.kind === 'page' ? -1 : b.kind === 'page' ? 1 : 0;
  const byName = (a: Folder | PageLeaf, b: Folder | PageLeaf): number => compareText(a.name, b.name) || pageFirst(a, b);
  const base = (a: Folder | PageLeaf, b: Folder | PageLeaf): number => {
    switch (sort) {
      case 'name':
        return byName(a, b);
      case 'type':
        return -pageFirst(a, b) || compareText(a.name, b.name);
      case 'mtime':
        return a.updatedAt - b.updatedAt || byName(a, b);
    }
  };
  return order === 'asc' ? base : (a, b) => -base(a, b);
}

/** Adds one page under `root`, creating the folders on its path. */
function place(root: Folder, record: PageEntryRecord): void {
  const segments = record.path.split('/');
  const pageName = segments.pop() ?? record.path;
  const updatedAt = record.updatedAt.getTime();
  let folder = root;
  folder.updatedAt = Math.max(folder.updatedAt, updatedAt);
  let folderPath = '';
  for (const segment of segments) {
    folderPath = folderPath === '' ? segment : `${folderPath}/${segment}`;
    let child = folder.folders.get(segment);
    if (child === undefined) {
      child = newFolder('directory', folderPath, segment, record.workspace);
      folder.folders.set(segment, child);
      folder.children.push(child);
    }
    child.updatedAt = Math.max(child.updatedAt, updatedAt);
    folder = child;
  }
  folder.children.push({ kind: 'page', name: pageName, updatedAt, record });
}

function toWire(
  node: Folder | PageLeaf,
  compare: (a: Folder | PageLeaf, b: Folder | PageLeaf) => number,
): WikiTreeNode {
  if (node.kind === 'page') return toPageEntry(node.record);
  const children = [...node.children].sort(compare).map((child) => toWire(child, compare));
  const updatedAt = new Date(node.updatedAt).toISOString();
  if (node.kind === 'directory') {
    return { type: 'directory', id: node.id, name: node.name, workspace: node.workspace, updatedAt, children };
  }
  const uri = formatDaguUri({ kind: 'wiki', workspace: node.workspace });
  return { type: 'workspace', id: node.id, name: node.name, workspace: node.workspace, uri, updatedAt, children };
}

/**
 * Builds the tree of `records` (one page of results, any order).
 *
 * Shape, one workspace: `[{type: 'directory', id: 'runbooks', name: 'runbooks',
 * children: [{type: 'file', id: 'runbooks/deploy', uri: 'dagu://wiki/team/runbooks%2Fdeploy', …}]}]`.
 * With `allWorkspaces`, each workspace is a `{type: 'workspace', id: 'team',
 * uri: 'dagu://wiki/team', children}` node around its own tree.
 */
export function buildPageTree(
  records: readonly PageEntryRecord[],
  opts: { allWorkspaces: boolean; sort: WikiSort; order: WikiOrder },
): WikiTreeNode[] {
  const top = newFolder('directory', '', '', '');
  for (const record of records) {
    let root = top;
    if (opts.allWorkspaces) {
      let workspace = top.folders.get(record.workspace);
      if (workspace === undefined) {
        workspace = newFolder('workspace', record.workspace, record.workspace, record.workspace);
        top.folders.set(record.workspace, workspace);
        top.children.push(workspace);
      }
      root = workspace;
    }
    place(root, record);
  }
  const compare = comparatorOf(opts.sort, opts.order);
  return [...top.children].sort(compare).map((child) => toWire(child, compare));
}
