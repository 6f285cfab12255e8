import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { guardedFetch, OutboundRequestError } from './guarded-fetch';
import { OutboundAllowList } from './address-guard';
import { AddressRanges } from './address-ranges';

// guardedFetch against a real local HTTP server: the guard refuses loopback unless allowed,
// cross-host redirects, oversize bodies and slow answers.
describe('guardedFetch', () => {
  let server: Server;
  let base: string;
  beforeAll(async () => {
    server = createServer((req, res) => {
      if (req.url === '/big') return void res.end('x'.repeat(5000));
      if (req.url === '/slow') return void setTimeout(() => res.end('late'), 2000);
      if (req.url === '/away') return void res.writeHead(302, { location: 'http://example.com/' }).end();
      if (req.url === '/here') return void res.writeHead(302, { location: '/doc' }).end();
      res.setHeader('content-type', 'application/json');
      res.end('{"ok":true}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const opts = { protocols: ['http:'], allowNonPublic: true } as const;
  const reason = (p: Promise<unknown>) =>
    p.then(
      () => 'ok',
      (err: unknown) => (err instanceof OutboundRequestError ? err.reason : String(err)),
    );

  it('fetches when loopback is allowed', async () => {
    const res = await guardedFetch(`${base}/doc`, opts);
    expect(JSON.parse(res.body.toString())).toEqual({ ok: true });
  });
  it('refuses loopback (an IP literal and a name resolving to it) by default', async () => {
    expect(await reason(guardedFetch(`${base}/doc`, { protocols: ['http:'] }))).toBe('blocked');
    const port = new URL(base).port;
    expect(await reason(guardedFetch(`http://localhost:${port}/doc`, { protocols: ['http:'] }))).toBe('blocked');
  });
  it('reaches loopback in any spelling only inside the deployment ranges, whatever the allow-list says', async () => {
    const port = new URL(base).port;
    const reachable = { ranges: AddressRanges.parse(['127.0.0.1/32']), setting: 'OUTBOUND_ALLOW_CIDRS' };
    const none = { ranges: AddressRanges.NONE, setting: 'OUTBOUND_ALLOW_CIDRS' };
    for (const host of ['127.0.0.1', '2130706433', '0x7f000001', '127.1', '[::ffff:127.0.0.1]']) {
      const url = `http://${host}:${port}/doc`;
      expect((await guardedFetch(url, { protocols: ['http:'], reachable })).status).toBe(200);
      const refused = await guardedFetch(url, {
        protocols: ['http:'],
        reachable: none,
        allow: new OutboundAllowList(['127.0.0.1', '127.0.0.0/8']),
      }).catch((err: unknown) => err);
      expect(refused).toBeInstanceOf(OutboundRequestError);
      expect(refused).toMatchObject({ reason: 'blocked', refused: { rule: 'loopback' } });
      expect((refused as Error).message).toMatch(
        /^(::ffff:7f00:1 \()?127\.0\.0\.1\)? is loopback and not in OUTBOUND_ALLOW_CIDRS$/,
      );
    }
    // 127.0.0.2 is loopback too, but outside 127.0.0.1/32: refused before any connection.
    const other = await guardedFetch(`http://127.2:${port}/doc`, { protocols: ['http:'], reachable }).catch(
      (err: unknown) => err,
    );
    expect(other).toMatchObject({
      reason: 'blocked',
      message: '127.0.0.2 is loopback and not in OUTBOUND_ALLOW_CIDRS',
    });
    // Inside the ranges the allow-list still narrows.
    const offList = await guardedFetch(`${base}/doc`, {
      protocols: ['http:'],
      reachable,
      allow: new OutboundAllowList(['10.0.0.0/8']),
    }).catch((err: unknown) => err);
    expect(offList).toMatchObject({ reason: 'blocked', refused: { address: '127.0.0.1', rule: 'allow-list' } });
  });
  it('refuses http unless listed, hosts off the allow-list, and cross-host redirects', async () => {
    expect(await reason(guardedFetch(`${base}/doc`, { allowNonPublic: true }))).toBe('protocol');
    expect(
      await reason(guardedFetch(`${base}/doc`, { ...opts, allow: new OutboundAllowList(['api.example.com']) })),
    ).toBe('blocked');
    expect(await reason(guardedFetch(`${base}/away`, { ...opts, maxRedirects: 3 }))).toBe('redirect');
    expect((await guardedFetch(`${base}/here`, { ...opts, maxRedirects: 1 })).status).toBe(200);
  });
  it('enforces the size and time limits', async () => {
    expect(await reason(guardedFetch(`${base}/big`, { ...opts, maxBytes: 1000 }))).toBe('too_large');
    const cut = await guardedFetch(`${base}/big`, { ...opts, maxBytes: 1000, truncate: true });
    expect([cut.body.length, cut.truncated]).toEqual([1000, true]);
    expect((await guardedFetch(`${base}/big`, { ...opts, maxBytes: 5000, truncate: true })).truncated).toBeUndefined();
    expect(await reason(guardedFetch(`${base}/slow`, { ...opts, timeoutMs: 200 }))).toBe('timeout');
  });
});
