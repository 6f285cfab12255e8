import type { Logger } from '@dagu-mcp/runtime';
import type { ServerNotification } from '@modelcontextprotocol/sdk/types.js';
import type { ExtensionRouter } from './extension-router';

/** How often each replica compares the served extension tools, ms. */
export const TOOL_LIST_WATCH_MS = 1000;

/**
 * Tells live MCP sessions when the extension tools change (issue 29 item 2): every
 * {@link TOOL_LIST_WATCH_MS} the replica lists the served tools; when the names differ from
 * the last look (a service started or stopped announcing, an admin enabled or disabled one),
 * it sends `notifications/tools/list_changed` to the sessions live on this replica and to
 * its `subscriptions/listen` streams that asked for tool-list changes. Each
 * replica watches for its own sessions. The timer is unref'd: it never holds the process.
 *
 * @returns stops watching
 */
export function watchToolList(
  router: ExtensionRouter,
  sessions: {
    notifyLocalSessions(notification: ServerNotification): Promise<number>;
    /** The replica's `subscriptions/listen` streams that asked for tool-list changes (2026-07-28). */
    listenersToolsChanged?(): number;
  },
  logger: Logger,
): () => void {
  let last: string | undefined;
  let busy = false;
  const timer = setInterval(() => {
    if (busy) return;
    busy = true;
    void router
      .catalogs()
      .then(async (catalogs) => {
        const names = catalogs
          .flatMap((c) => c.catalog.tools.map((t) => t.name))
          .sort()
          .join('\n');
        const changed = last !== undefined && names !== last;
        last = names;
        if (changed) {
          const count = await sessions.notifyLocalSessions({ method: 'notifications/tools/list_changed' });
          const listeners = sessions.listenersToolsChanged?.() ?? 0;
          logger.info({ sessions: count, listeners }, 'extension tools changed: tools/list_changed sent');
        }
      })
      .catch((err: unknown) => logger.warn({ err }, 'extension tool list check failed'))
      .finally(() => {
        busy = false;
      });
  }, TOOL_LIST_WATCH_MS);
  timer.unref();
  return () => clearInterval(timer);
}
