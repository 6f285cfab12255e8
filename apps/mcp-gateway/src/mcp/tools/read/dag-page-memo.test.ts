import type { DagListIfChangedReply, DagListReply, DagListRequest } from '@dagu-mcp/contracts';
import { DagPageMemo } from './dag-page-memo';
import { readSuccess } from './read-tool';
import { encodeJsonBody } from '../../transport/json-body';
import type { ReadRequest } from './read-input';

/** The gateway's `dags` page copies: dag-service decides, the memo only keeps. */
const pageOf = (...names: string[]): DagListReply => ({
  items: names.map((name) => ({
    name,
    uri: `dagu://dags/${name}/spec`,
    suspended: false,
    labels: [],
    schedule: [],
    updatedAt: '2026-12-02T00:00:00.000Z',
  })),
  pagination: { page: 1, perPage: 50, total: names.length, totalPages: 1 },
});

/** A stand-in for dag-service's `dag.listIfChanged`: the tag is the page's names. */
function service(current: { page: DagListReply }) {
  const asked: Array<{ query: DagListRequest; ifNoneMatch: string | undefined }> = [];
  const fetch = async (query: DagListRequest, ifNoneMatch: string | undefined): Promise<DagListIfChangedReply> => {
    asked.push({ query, ifNoneMatch });
    const etag = current.page.items.map((i) => i.name).join(',');
    return etag === ifNoneMatch ? { etag } : { etag, page: structuredClone(current.page) };
  };
  return { fetch, asked };
}

describe('DagPageMemo', () => {
  it('sends the held tag, serves the held (frozen) copy when unchanged, and takes the new page when changed', async () => {
    const current = { page: pageOf('a') };
    const { fetch, asked } = service(current);
    const memo = new DagPageMemo();
    const first = await memo.read({ perPage: 50 }, fetch);
    expect(first).toEqual(pageOf('a'));
    expect(Object.isFrozen(first) && Object.isFrozen(first.items[0])).toBe(true);
    const second = await memo.read({ perPage: 50 }, fetch);
    expect(second).toBe(first);
    expect(asked.map((a) => a.ifNoneMatch)).toEqual([undefined, 'a']);
    current.page = pageOf('a', 'b');
    const third = await memo.read({ perPage: 50 }, fetch);
    expect(third).toEqual(pageOf('a', 'b'));
    expect(memo.stats()).toMatchObject({ hits: 1, misses: 2, entries: 1 });
  });

  it('keys copies by the whole query and keeps what they weigh under maxBytes', async () => {
    const { fetch, asked } = service({ page: pageOf('a') });
    const probe = new DagPageMemo();
    await probe.read({ page: 1 }, fetch);
    const one = probe.stats().bytes;
    expect(one).toBeGreaterThan(4 * JSON.stringify(pageOf('a')).length);
    asked.length = 0;
    const memo = new DagPageMemo(2 * one + 100);
    await memo.read({ page: 1 }, fetch);
    await memo.read({ page: 2 }, fetch);
    await memo.read({ page: 1, order: 'desc' }, fetch);
    await memo.read({ page: 1 }, fetch);
    expect(asked.map((a) => a.ifNoneMatch)).toEqual([undefined, undefined, undefined, undefined]);
    expect(memo.stats().entries).toBe(2);
    expect(memo.stats().bytes).toBeLessThanOrEqual(2 * one + 100);
    // A page heavier than the cap, or a query with a very long key, is served but not held.
    const big = service({ page: pageOf('a', 'b', 'c', 'd', 'e') });
    await memo.read({ page: 9 }, big.fetch);
    await memo.read({ page: 9 }, big.fetch);
    const longName = { name: 'x'.repeat(2000) };
    await new DagPageMemo().read(longName, big.fetch);
    expect(big.asked.map((a) => a.ifNoneMatch)).toEqual([undefined, undefined, undefined]);
    const unbounded = new DagPageMemo();
    const page = await unbounded.read(longName, big.fetch);
    expect(Object.isFrozen(page)).toBe(false);
    expect(unbounded.stats()).toMatchObject({ entries: 0, bytes: 0 });
  });

  it('refuses an "unchanged" answer for another tag than the one sent, and keeps nothing from a failed fetch', async () => {
    const memo = new DagPageMemo();
    await expect(memo.read({}, async () => ({ etag: 'x' }))).rejects.toThrow(/did not send/);
    await expect(
      memo.read({}, async () => {
        throw new Error('dag-service did not answer');
      }),
    ).rejects.toThrow('dag-service did not answer');
    expect(memo.stats().entries).toBe(0);
  });

  it('a held page is rendered and encoded once: the same result object, whose JSON is the plain JSON', async () => {
    const memo = new DagPageMemo();
    const { fetch } = service({ page: pageOf('a', 'b') });
    const request: ReadRequest = { target: 'dags', fields: {}, query: '' } as unknown as ReadRequest;
    const page = await memo.read({}, fetch);
    const one = readSuccess(request, page);
    const two = readSuccess(request, await memo.read({}, fetch));
    expect(two).toBe(one);
    expect(Object.isFrozen(one)).toBe(true);
    const body = { jsonrpc: '2.0', id: 7, result: one };
    expect(JSON.parse(encodeJsonBody(body).toString('utf8'))).toEqual(JSON.parse(JSON.stringify(body)));
    // A page that is not held (not frozen) is rendered per read.
    const loose = pageOf('a') as unknown as Record<string, unknown>;
    expect(readSuccess(request, loose)).not.toBe(readSuccess(request, loose));
  });
});
