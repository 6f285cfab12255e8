import { cspSourceOf, redirectHost, redirectUriProblem } from './redirect-uris';

// Every redirect-URI rule of registration.
describe('redirectUriProblem', () => {
  it.each([
    'https://app.example.com/callback',
    'https://vscode.dev/redirect',
    'http://127.0.0.1/',
    'http://127.0.0.1:33418/callback',
    'http://localhost:5173/cb',
    'http://[::1]:8080/cb',
    'com.example.app:/oauth2redirect',
    'cursor.desktop://anysphere.cursor-retrieval/callback',
  ])('allows %s', (uri) => {
    expect(redirectUriProblem(uri)).toBeUndefined();
  });

  it.each([
    ['javascript:alert(1)', /javascript/],
    ['data:text/html,hi', /data/],
    ['file:///etc/passwd', /file/],
    ['https://app.example.com/cb#frag', /fragment/],
    ['https://*.example.com/cb', /wildcard/],
    ['http://app.example.com/cb', /loopback/],
    ['http://10.0.0.5/cb', /loopback/],
    ['myapp:/cb', /reverse domain/],
    ['https://user:pw@app.example.com/cb', /user name/],
    ['not a uri', /absolute/],
  ])('refuses %s', (uri, reason) => {
    expect(redirectUriProblem(uri)).toMatch(reason);
  });

  it('names the host (or the app scheme) for the consent page', () => {
    expect(redirectHost('http://127.0.0.1:5000/cb')).toBe('127.0.0.1:5000');
    expect(redirectHost('com.example.app:/cb')).toBe('com.example.app');
  });
});

// The sign-in and consent pages' CSP names the redirect target, nothing broader.
describe('cspSourceOf', () => {
  it.each([
    ['http://127.0.0.1:33418/callback?x=1', 'http://127.0.0.1:33418/callback'],
    ['http://localhost:5173/cb', 'http://localhost:5173/cb'],
    ['https://app.example.com/oauth/callback', 'https://app.example.com/oauth/callback'],
    ['https://app.example.com/a;b,c/d%20e', 'https://app.example.com/a%3Bb%2Cc/d%20e'],
    ['com.example.app:/oauth2redirect', 'com.example.app:'],
    ['cursor.desktop://anysphere.cursor-retrieval/callback', 'cursor.desktop:'],
  ])('%s → %s', (uri, source) => {
    expect(cspSourceOf(uri)).toBe(source);
  });

  it('gives nothing for what CSP cannot name or what does not parse', () => {
    expect(cspSourceOf('http://[::1]:8080/cb')).toBeUndefined();
    expect(cspSourceOf('https://a,b.example/cb')).toBeUndefined();
    expect(cspSourceOf('not a uri')).toBeUndefined();
  });
});
