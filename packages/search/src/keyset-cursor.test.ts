import { createHash } from 'node:crypto';
import { z } from 'zod';
import { DaguError } from '@dagu-mcp/contracts';
import { createKeysetCursor, MAX_CURSOR_CHARS, scopeFingerprint } from './keyset-cursor';

/** Spec 021 `cursor`: opaque, returned by the same target; a bad one is `invalid_tool_input` on `cursor`. */
function errorOf(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error: unknown) {
    return error;
  }
  throw new Error('expected a failure');
}

function expectInvalidCursor(fn: () => unknown): void {
  const error = errorOf(fn);
  expect(error).toBeInstanceOf(DaguError);
  expect(error).toMatchObject({ code: 'invalid_tool_input', field: 'cursor' });
}

const b64 = (value: unknown): string =>
  Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');

const names = createKeysetCursor(z.string().min(1));
const pks = createKeysetCursor(z.number().int().positive());
const pages = createKeysetCursor(z.strictObject({ workspace: z.string().min(1), path: z.string().min(1) }));
const scope = ['echo', 'all'];

describe('createKeysetCursor', () => {
  it.each([
    ['a DAG name', names, 'nightly-report'],
    ['a run primary key', pks, 42],
    ['a wiki page', pages, { workspace: 'team', path: 'a/b' }],
  ] as const)(
    'round-trips %s',
    (_label, codec: { encode(p: unknown, s: unknown): string; decode(c: string, s: unknown): unknown }, position) => {
      const cursor = codec.encode(position, scope);
      expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
      expect(codec.decode(cursor, scope)).toEqual(position);
    },
  );

  it('writes {v, after, scope}: DAG and run cursors issued before the shared codec still decode', () => {
    const fingerprint = createHash('sha256')
      .update(JSON.stringify(['echo', 'all']))
      .digest('base64url')
      .slice(0, 16);
    const legacy = b64({ v: 1, after: 'nightly-report', scope: fingerprint });
    expect(names.encode('nightly-report', scope)).toBe(legacy);
    expect(names.decode(legacy, scope)).toBe('nightly-report');
    expect(scopeFingerprint(scope)).toBe(fingerprint);
  });

  it('binds a cursor to its scope', () => {
    const cursor = names.encode('a', scope);
    expectInvalidCursor(() => names.decode(cursor, ['Echo', 'all']));
    expectInvalidCursor(() => names.decode(cursor, ['echo', 'ops']));
    expectInvalidCursor(() => pks.decode(pks.encode(7, { status: [1] }), { status: [2] }));
  });

  it.each([
    ['not base64url', 'not a cursor!'],
    ['padding', `${Buffer.from('{}').toString('base64')}==`],
    ['not JSON', b64('hello')],
    ['JSON of another shape', b64({ after: 'a' })],
    ['the old wiki shape', b64({ v: 1, w: 'team', p: 'a', s: scopeFingerprint(scope) })],
    ['another version', b64({ v: 2, after: 'a', scope: scopeFingerprint(scope) })],
    ['an unknown key', b64({ v: 1, after: 'a', scope: scopeFingerprint(scope), x: 1 })],
    ['an empty position', b64({ v: 1, after: '', scope: scopeFingerprint(scope) })],
    ['a position of another type', b64({ v: 1, after: 7, scope: scopeFingerprint(scope) })],
    ['an empty scope', b64({ v: 1, after: 'a', scope: '' })],
    ['far too long', 'A'.repeat(MAX_CURSOR_CHARS + 1)],
    ['empty', ''],
  ])('refuses %s with invalid_tool_input on cursor', (_label, cursor) => {
    expectInvalidCursor(() => names.decode(cursor, scope));
  });

  it('refuses a tampered cursor', () => {
    const payload = JSON.parse(Buffer.from(pks.encode(42, scope), 'base64url').toString('utf8')) as Record<
      string,
      unknown
    >;
    expectInvalidCursor(() => pks.decode(b64({ ...payload, after: -1 }), scope));
    expectInvalidCursor(() => pks.decode(b64({ ...payload, after: 1.5 }), scope));
    expectInvalidCursor(() => pks.decode(b64({ ...payload, scope: 'AAAAAAAAAAAAAAAA' }), scope));
  });

  it('accepts a long wiki position (paths up to 1024 characters)', () => {
    const position = { workspace: 'w'.repeat(64), path: 'p'.repeat(1024) };
    expect(pages.decode(pages.encode(position, scope), scope)).toEqual(position);
  });
});
