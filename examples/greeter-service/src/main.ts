import { z } from 'zod';
import { ExtensionService } from '@dagu-mcp/service-kit';
import { DEFAULT_GREETING, greeterTools } from './greeter-tools';

/**
 * The greeter extension service (docs/extending.md): announces its two tools to the
 * platform over Redis and serves them once an admin enabled it
 * (`PUT /api/v1/extensions/greeter {"enabled": true}`).
 *
 * | Variable | Meaning | Default |
 * | --- | --- | --- |
 * | `REDIS_URL` | the platform's Redis | `redis://127.0.0.1:6379` |
 * | `BUS_PREFIX` | the platform's bus prefix | `dagu` |
 */
const config = z
  .object({
    REDIS_URL: z.string().min(1).default('redis://127.0.0.1:6379'),
    BUS_PREFIX: z.string().min(1).default('dagu'),
  })
  .parse(process.env);

const service = new ExtensionService({
  redisUrl: config.REDIS_URL,
  prefix: config.BUS_PREFIX,
  name: 'greeter',
  tools: greeterTools({ greeting: DEFAULT_GREETING }),
});

service.start().then(
  () => process.stdout.write('greeter service announcing\n'),
  (err: unknown) => {
    process.stderr.write(`greeter service failed to start: ${String(err)}\n`);
    process.exit(1);
  },
);
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => void service.stop().finally(() => process.exit(0)));
}
