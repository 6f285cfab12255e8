import { PingReplySchema } from '@dagu-mcp/contracts';
import { createPingHandler } from './ping.handler';

describe('createPingHandler', () => {
  it('answers who answered and when, in the ping reply schema', async () => {
    const before = Date.now();
    const reply = await createPingHandler('dag-service', 'host-1-abc123')();
    expect(PingReplySchema.parse(reply)).toEqual({
      service: 'dag-service',
      replica: 'host-1-abc123',
      at: expect.any(String),
    });
    expect(Date.parse(reply.at)).toBeGreaterThanOrEqual(before - 1);
    expect(reply.at).toMatch(/Z$/);
  });
});
