import type { Request } from 'express';
import { parseAuthorization, takeCredential } from './credentials';

const basic = (userPass: string): string => `Basic ${Buffer.from(userPass, 'utf8').toString('base64')}`;

/** Reading the credential of a request (020 §Authentication). */
describe('parseAuthorization', () => {
  it.each([
    ['Bearer dagu_abc', { scheme: 'bearer', token: 'dagu_abc' }],
    ['bearer   eyJ.x.y  ', { scheme: 'bearer', token: 'eyJ.x.y' }],
    [basic('alice:s3cret'), { scheme: 'basic', username: 'alice', password: 's3cret' }],
    [basic('alice:pa:ss:word'), { scheme: 'basic', username: 'alice', password: 'pa:ss:word' }],
    [basic('ålice:pässword'), { scheme: 'basic', username: 'ålice', password: 'pässword' }],
    [basic(':'), { scheme: 'basic', username: '', password: '' }],
  ])('reads %p', (header, expected) => {
    expect(parseAuthorization(header)).toEqual(expected);
  });

  it.each(['Bearer', 'Bearer ', 'Basic', basic('no-colon'), 'Digest abc', 'Token abc', ''])(
    'calls %p malformed',
    (header) => {
      expect(parseAuthorization(header)).toBe('malformed');
    },
  );
});

function request(url: string, authorization?: string): Request {
  const req = { url, originalUrl: url, headers: authorization === undefined ? {} : { authorization } };
  return req as unknown as Request;
}

describe('takeCredential', () => {
  it('prefers the header over ?token=, and strips the token from the URLs either way', () => {
    const req = request('/mcp?a=1&token=dagu_query&b=2', 'Bearer dagu_header');
    expect(takeCredential(req)).toEqual({ scheme: 'bearer', token: 'dagu_header' });
    expect(req.url).toBe('/mcp?a=1&b=2');
    expect(req.originalUrl).toBe('/mcp?a=1&b=2');
  });

  it('falls back to ?token= without a header', () => {
    const req = request('/mcp?token=dagu_query');
    expect(takeCredential(req)).toEqual({ scheme: 'bearer', token: 'dagu_query' });
    expect(req.url).toBe('/mcp');
  });

  it('has no credential without header or token, or with an empty token', () => {
    expect(takeCredential(request('/mcp?x=1'))).toBeUndefined();
    expect(takeCredential(request('/mcp?token='))).toBeUndefined();
  });
});
