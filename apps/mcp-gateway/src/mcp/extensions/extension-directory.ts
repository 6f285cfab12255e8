import type { Redis } from 'ioredis';
import { catalogKey, ExtensionCatalogSchema, ExtensionNameSchema, type ExtensionCatalog } from '@dagu-mcp/contracts';

/** Most catalog keys one listing looks at (a runaway key space cannot make the admin page slow). */
const MAX_ANNOUNCED = 500;

/** Escapes Redis glob characters so a `BUS_PREFIX` is matched literally. */
function globEscape(text: string): string {
  return text.replace(/[*?[\]\\]/g, (c) => `\\${c}`);
}

/**
 * The extension services announcing a catalog now, whether or not they are served
 * (`GET /api/v1/extensions` shows an admin what there is to enable). Finds the
 * catalog keys `<prefix>:mcp:ext:<name>:catalog` with `SCAN` (never `KEYS`), at most
 * {@link MAX_ANNOUNCED}.
 */
export class ExtensionDirectory {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  /**
   * Every announcing extension by name, with its catalog as announced, or `undefined` when
   * the announced catalog does not parse.
   */
  async announced(): Promise<Map<string, ExtensionCatalog | undefined>> {
    const head = `${this.prefix}:mcp:ext:`;
    const names: string[] = [];
    let cursor = '0';
    do {
      const [next, keys] = await this.redis.scan(cursor, 'MATCH', `${globEscape(head)}*:catalog`, 'COUNT', 200);
      cursor = next;
      for (const key of keys) {
        const name = key.slice(head.length, -':catalog'.length);
        if (ExtensionNameSchema.safeParse(name).success && !names.includes(name)) names.push(name);
      }
    } while (cursor !== '0' && names.length < MAX_ANNOUNCED);
    const out = new Map<string, ExtensionCatalog | undefined>();
    if (names.length === 0) return out;
    names.sort();
    const raw = await this.redis.mget(...names.map((n) => catalogKey(this.prefix, n)));
    names.forEach((name, i) => {
      const text = raw[i];
      if (text === null || text === undefined) return; // lapsed between SCAN and MGET
      out.set(name, parse(text));
    });
    return out;
  }
}

function parse(text: string): ExtensionCatalog | undefined {
  try {
    const parsed = ExtensionCatalogSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}
