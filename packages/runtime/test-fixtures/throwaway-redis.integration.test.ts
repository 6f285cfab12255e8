import { createConnection } from 'node:net';
import { startThrowawayRedis } from './throwaway-redis';

/** Sends one inline command and returns the first reply line. */
async function command(port: number, line: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = createConnection({ port, host: '127.0.0.1' }, () => socket.write(`${line}\r\n`));
    socket.once('data', (data: Buffer) => {
      socket.destroy();
      resolve(data.toString().trim());
    });
    socket.once('error', reject);
  });
}

it('starts, stops (an outage) and starts again empty on the same port', async () => {
  const redis = await startThrowawayRedis();
  try {
    expect(await command(redis.port, 'SET k v')).toBe('+OK');
    await redis.stop();
    expect(redis.running).toBe(false);
    await expect(command(redis.port, 'PING')).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    await redis.start();
    expect(await command(redis.port, 'GET k')).toBe('$-1');
  } finally {
    await redis.stop();
  }
});
