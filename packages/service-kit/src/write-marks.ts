import type { HandlerContext } from '@dagu-mcp/bus';
import type { OpCatalog } from '@dagu-mcp/contracts';
import type { ReadRouter } from '@dagu-mcp/runtime';

/**
 * Wraps every mutation handler of `catalog` so that, once it settled (replied
 * or failed: a failed one may have committed part of its work), the caller's
 * write position is recorded before the reply leaves (`ReadRouter.noteWrite`):
 * the caller's next read, on any service, sees its change (read-your-writes). Without a replica the handlers are returned as they are.
 *
 * @param catalog  the service's op catalog (`mutation: true` marks the wrapped ops)
 * @param handlers its handler map
 * @param router   the service's read router
 * @returns the same map type, mutations wrapped
 */
export function withWriteMarks<C extends OpCatalog, H extends object>(catalog: C, handlers: H, router: ReadRouter): H {
  if (!router.hasReplica) return handlers;
  const wrapped = new Map<string, (payload: unknown, ctx: HandlerContext) => Promise<unknown>>();
  return new Proxy(handlers, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof property !== 'string' || typeof value !== 'function') return value;
      if (!Object.hasOwn(catalog, property) || catalog[property]?.mutation !== true) return value;
      let marked = wrapped.get(property);
      if (marked === undefined) {
        marked = async (payload, ctx) => {
          try {
            const result: unknown = await Promise.resolve(Reflect.apply(value, target, [payload, ctx]));
            return result;
          } finally {
            await router.noteWrite(ctx.principal.id);
          }
        };
        wrapped.set(property, marked);
      }
      return marked;
    },
  });
}
