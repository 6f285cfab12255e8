import type { RunEvent } from '@dagu-mcp/contracts';
import { createLogger } from '@dagu-mcp/runtime';
import { RunEventDispatcher } from './run-events';
import { claimKeyOf, RunSubscriptionRelay, subscribedUrisOf } from './run-subscriptions';

const event = (status: number, at = '2026-11-29T10:00:00.000Z'): RunEvent => ({
  name: 'nightly',
  dagRunId: 'r1',
  attemptId: 'a1',
  status,
  statusLabel: String(status),
  at,
});

/** Two replicas hearing the same events, sharing one claim store (Redis SET NX). */
function twoReplicas(subscribed = true) {
  const claimed = new Set<string>();
  const asked: string[][] = [];
  const notified: Array<{ replica: number; uri: string }> = [];
  const logger = createLogger({ name: 'test', level: 'silent' });
  const sources = [new RunEventDispatcher(), new RunEventDispatcher()];
  const relays = sources.map(
    (events, replica) =>
      new RunSubscriptionRelay({
        events,
        logger,
        anySubscribed: async (uris) => {
          asked.push([...uris]);
          return subscribed;
        },
        claim: async (key) => {
          if (claimed.has(key)) return false;
          claimed.add(key);
          return true;
        },
        notify: async (uri) => {
          notified.push({ replica, uri });
          return 1;
        },
      }),
  );
  for (const relay of relays) relay.start();
  const publish = async (e: RunEvent): Promise<void> => {
    for (const source of sources) source.publish(e);
    await Promise.all(relays.map((r) => r.stop()));
    for (const relay of relays) relay.start();
  };
  return { publish, notified, claimed, asked };
}

describe('run subscription relay (dagu-model §8)', () => {
  it('names the run and its logs, by id and as the latest run', () => {
    expect(subscribedUrisOf({ name: 'nightly', dagRunId: 'r1' })).toEqual([
      'dagu://runs/nightly/r1',
      'dagu://runs/nightly/r1/logs',
      'dagu://runs/nightly/latest',
      'dagu://runs/nightly/latest/logs',
    ]);
  });

  it('notifies once over two replicas when a run ends', async () => {
    const { publish, notified } = twoReplicas();
    await publish(event(4));
    expect(notified.map((n) => n.uri).sort()).toEqual([
      'dagu://runs/nightly/latest',
      'dagu://runs/nightly/latest/logs',
      'dagu://runs/nightly/r1',
      'dagu://runs/nightly/r1/logs',
    ]);
    expect(new Set(notified.map((n) => n.replica)).size).toBe(1);
  });

  it('claims nothing and notifies no one when no session is subscribed to any of the URIs', async () => {
    const { publish, notified, claimed, asked } = twoReplicas(false);
    await publish(event(4));
    expect(notified).toHaveLength(0);
    expect(claimed.size).toBe(0);
    expect(asked).toHaveLength(2);
    expect(asked[0]).toEqual(subscribedUrisOf({ name: 'nightly', dagRunId: 'r1' }));
  });

  it('notifies at the waiting checkpoint and again at the end; not for queued or running', async () => {
    const { publish, notified } = twoReplicas();
    await publish(event(5));
    await publish(event(1));
    expect(notified).toHaveLength(0);
    await publish(event(7, '2026-11-29T10:00:01.000Z'));
    await publish(event(4, '2026-11-29T10:00:02.000Z'));
    expect(notified).toHaveLength(8);
  });

  it('keys a claim by run, attempt, status and time', () => {
    expect(claimKeyOf(event(4))).not.toBe(claimKeyOf(event(4, '2026-11-29T10:00:09.000Z')));
    expect(claimKeyOf(event(4))).not.toBe(claimKeyOf(event(2)));
  });

  it('ignores child-run events', async () => {
    const { publish, notified } = twoReplicas();
    await publish({ ...event(4), root: { name: 'parent', dagRunId: 'p1' } });
    expect(notified).toHaveLength(0);
  });
});
