/**
 * `npm start`'s process runner (scripts/run-stack.js) stopped the way a person stops it: Ctrl-C,
 * which a terminal delivers as SIGINT to the whole foreground process group (issue "The first
 * hour", item 8). Every app shuts down, and the log has no warning about lost Redis connections
 * (closing them is the shutdown, not a loss) and no ANSI codes (its stdout is not a terminal).
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { freePort, TEST_DATABASE_URL } from './stack';

test('Ctrl-C stops the stack cleanly: every app stops, no warnings, no colour codes', async () => {
  const port = await freePort();
  const id = randomBytes(4).toString('hex');
  const child = spawn(process.execPath, [join(__dirname, '..', '..', 'scripts', 'run-stack.js')], {
    // Its own process group, as a shell gives a foreground job; the apps inherit it.
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      PATH: process.env.PATH ?? '',
      PORT: String(port),
      DATABASE_URL: TEST_DATABASE_URL,
      BUS_PREFIX: `runstack-${id}`,
      AUTH_MODE: 'none',
    },
  });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  try {
    for (let i = 0; i < 300; i++) {
      const ready = await fetch(`http://127.0.0.1:${port}/readyz`).then(
        (r) => r.status === 200,
        () => false,
      );
      if (ready) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(output).toContain('gateway listening');
    process.kill(-(child.pid ?? 0), 'SIGINT');
    expect(await exited).toBe(0);
  } finally {
    if (child.exitCode === null) process.kill(-(child.pid ?? 0), 'SIGKILL');
  }
  const afterStop = output.slice(output.indexOf('shutting down'));
  for (const app of ['dag-service', 'run-service', 'wiki-service']) expect(afterStop).toContain(`"app":"${app}"`);
  expect(afterStop).toContain('gateway stopped');
  expect(afterStop).not.toContain('redis connection lost');
  expect(afterStop).not.toMatch(/"level":(40|50|60)/);
  expect(output).not.toMatch(new RegExp(String.fromCharCode(27) + '\\['));
}, 60_000);
