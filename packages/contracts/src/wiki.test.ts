import type { z } from 'zod';
import { firstErrorPath } from '../test-fixtures/first-error-path';
import {
  WIKI_PAGE_HARD_MAX_BYTES,
  WikiDeleteRequestSchema,
  WikiListReplySchema,
  WikiListRequestSchema,
  WikiPageRefSchema,
  WikiPutRequestSchema,
  WikiSearchRequestSchema,
} from './wiki';

/** The path of the first issue, dotted (`''` for the whole value), or `null` when the value is valid. */
describe('wiki contracts (spec 021 wiki targets, dagu-model §2 paths)', () => {
  const cases: Array<[string, z.ZodType, unknown, string | null]> = [
    ['list: empty (every workspace, defaults)', WikiListRequestSchema, {}, null],
    [
      'list: workspace all and the whole query',
      WikiListRequestSchema,
      { workspace: 'all', page: 2, perPage: 200, flat: true, sort: 'mtime', order: 'desc', prefix: 'a/' },
      null,
    ],
    ['list: perPage over 200', WikiListRequestSchema, { perPage: 201 }, 'perPage'],
    ['list: bad sort', WikiListRequestSchema, { sort: 'size' }, 'sort'],
    ['list: bad workspace', WikiListRequestSchema, { workspace: 'a b' }, 'workspace'],
    ['list: bad prefix', WikiListRequestSchema, { prefix: '../x' }, 'prefix'],
    ['list: unknown key', WikiListRequestSchema, { search: 'x' }, ''],
    ['page: nested path', WikiPageRefSchema, { workspace: 'team', path: 'runbooks/deploy' }, null],
    ['page: workspace all', WikiPageRefSchema, { workspace: 'all', path: 'a' }, 'workspace'],
    ['page: leading slash', WikiPageRefSchema, { workspace: 'team', path: '/a' }, 'path'],
    ['page: dot-dot segment', WikiPageRefSchema, { workspace: 'team', path: 'a/../b' }, 'path'],
    ['page: space in path', WikiPageRefSchema, { workspace: 'team', path: 'a b' }, 'path'],
    ['page: path too long', WikiPageRefSchema, { workspace: 'team', path: 'a'.repeat(1025) }, 'path'],
    [
      'put: content with expectedVersion 0',
      WikiPutRequestSchema,
      { workspace: 'team', path: 'a', content: '# A', expectedVersion: 0 },
      null,
    ],
    ['put: empty content is a page', WikiPutRequestSchema, { workspace: 'team', path: 'a', content: '' }, null],
    [
      'put: content too large',
      WikiPutRequestSchema,
      { workspace: 'team', path: 'a', content: 'é'.repeat(WIKI_PAGE_HARD_MAX_BYTES / 2 + 1) },
      'content',
    ],
    [
      'put: negative expectedVersion',
      WikiPutRequestSchema,
      { workspace: 'team', path: 'a', content: '', expectedVersion: -1 },
      'expectedVersion',
    ],
    ['put: missing content', WikiPutRequestSchema, { workspace: 'team', path: 'a' }, 'content'],
    [
      'delete: expectedVersion 0',
      WikiDeleteRequestSchema,
      { workspace: 'team', path: 'a', expectedVersion: 0 },
      'expectedVersion',
    ],
    [
      'search: all options',
      WikiSearchRequestSchema,
      { search: 'x', workspace: 'all', prefix: 'a/b', cursor: 'c', limit: 50 },
      null,
    ],
    ['search: limit 0', WikiSearchRequestSchema, { search: 'x', limit: 0 }, 'limit'],
    ['search: limit 51', WikiSearchRequestSchema, { search: 'x', limit: 51 }, 'limit'],
    ['search: empty search', WikiSearchRequestSchema, { search: '' }, 'search'],
  ];

  test.each(cases)('%s', (_name, schema, value, path) => {
    expect(firstErrorPath(schema, value)).toBe(path);
  });

  test('a list reply carries a recursive tree', () => {
    const file = {
      type: 'file',
      id: 'a/b',
      name: 'b',
      workspace: 'w',
      uri: 'dagu://wiki/w/a%2Fb',
      title: 'b',
      tags: [],
      size: 0,
      version: 1,
      updatedAt: 't',
    };
    const tree = [
      {
        type: 'workspace',
        id: 'w',
        name: 'w',
        workspace: 'w',
        uri: 'dagu://wiki/w',
        updatedAt: 't',
        children: [{ type: 'directory', id: 'a', name: 'a', workspace: 'w', updatedAt: 't', children: [file] }],
      },
    ];
    const reply = {
      tree,
      pagination: { page: 1, perPage: 50, total: 1, totalPages: 1 },
      flat: false,
      sort: 'type',
      order: 'asc',
    };
    expect(firstErrorPath(WikiListReplySchema, reply)).toBeNull();
    expect(firstErrorPath(WikiListReplySchema, { ...reply, tree: [{ ...file, type: 'folder' }] })).toBe('tree.0.type');
  });
});
