import type { Logger } from '@dagu-mcp/runtime';
import type { ServerNotification } from '@modelcontextprotocol/sdk/types.js';
import type { ExtensionRouter } from './extension-router';

/** How often each replica compares the served extension tools, ms. */
export const TOOL_LIST_WATCH_MS = 1000;

/**
 * Calls `onChange` when the served extension tools change: at once,
 * then every {@link TOOL_LIST_WATCH_MS}, the replica lists them (served names and definitions); when
 * they differ from the last look — a service started or stopped announcing or changed its
 * catalog, an admin enabled, disabled or narrowed one — `onChange` runs (one at a time; a
 * slow one skips the looks it overlaps). The timer is unref'd: it never holds the process.
 *
 * @returns stops watching
 */
export function watchExtensionTools(
  router: ExtensionRouter,
  onChange: () => Promise<void>,
  logger: Logger,
): () => void {
  let last: string | undefined;
  let busy = false;
  const look = (): void => {
    if (busy) return;
    busy = true;
    void router
      .catalogs()
      .then(async (catalogs) => {
        const tools = JSON.stringify(
          catalogs.flatMap((c) => c.catalog.tools).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)),
        );
        const changed = last !== undefined && tools !== last;
        last = tools;
        if (changed) await onChange();
      })
      .catch((err: unknown) => logger.warn({ err }, 'extension tool list check failed'))
      .finally(() => {
        busy = false;
      });
  };
  // The first look now, not a period later: a change made before it would become the baseline
  // and never be announced (an admin enabling an extension right after the gateway started).
  look();
  const timer = setInterval(look, TOOL_LIST_WATCH_MS);
  timer.unref();
  return () => clearInterval(timer);
}

/**
 * Tells `/mcp`'s live sessions when the extension tools change: each replica sends
 * `notifications/tools/list_changed` to the sessions live on it (an open stream or a running
 * request), so every session hears it once per replica it is busy on, and to its
 * `subscriptions/listen` streams that asked for tool-list changes (2026-07-28).
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
  return watchExtensionTools(
    router,
    async () => {
      const count = await sessions.notifyLocalSessions({ method: 'notifications/tools/list_changed' });
      const listeners = sessions.listenersToolsChanged?.() ?? 0;
      logger.info({ sessions: count, listeners }, 'extension tools changed: tools/list_changed sent');
    },
    logger,
  );
}
