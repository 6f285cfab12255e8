#!/usr/bin/env node
// `npm run new:service -- <name> [--dir <path>]` (issue 29 item 1, docs/extending.md): writes a
// working extension-service skeleton — one tool with its unit test, package.json, tsconfig,
// Dockerfile, a compose file to add next to docker-compose.yml, and a Kubernetes Deployment —
// into extensions/<name> (a pnpm workspace folder), or --dir. Refuses to overwrite anything.
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const name = args.find((a) => !a.startsWith('--') && args[args.indexOf(a) - 1] !== '--dir');
const dirFlag = args.indexOf('--dir');
if (name === undefined || !/^[a-z][a-z0-9-]{0,39}$/.test(name)) {
  console.error('usage: npm run new:service -- <name> [--dir <path>]   (name: a-z, 0-9, "-", starting with a letter)');
  process.exit(2);
}
const dir = resolve(dirFlag >= 0 ? (args[dirFlag + 1] ?? '') : join(ROOT, 'extensions', name));
if (existsSync(dir)) {
  console.error(`${relative(process.cwd(), dir) || dir} exists; choose another name or --dir`);
  process.exit(1);
}
const pkg = `@dagu-mcp/${name}-service`;
const up = relative(dir, ROOT) || '.';

const files = {
  'package.json':
    JSON.stringify(
      {
        name: pkg,
        version: '0.1.0',
        private: true,
        description: `The ${name} extension service: its tools are served by the gateway as ${name}.<tool> once an admin enabled it.`,
        main: 'dist/main.js',
        scripts: { build: 'tsc -p tsconfig.json', start: 'node dist/main.js' },
        dependencies: { '@dagu-mcp/contracts': 'workspace:*', '@dagu-mcp/service-kit': 'workspace:*' },
        devDependencies: { typescript: 'catalog:', '@types/node': 'catalog:', '@types/jest': 'catalog:' },
      },
      null,
      2,
    ) + '\n',
  'tsconfig.json':
    JSON.stringify(
      {
        extends: `${up}/tsconfig.base.json`,
        compilerOptions: { outDir: 'dist', rootDir: 'src' },
        include: ['src'],
        exclude: ['src/**/*.test.ts'],
      },
      null,
      2,
    ) + '\n',
  'src/tools.ts': `import { ExtensionToolError, type ExtensionToolDefinition } from '@dagu-mcp/service-kit';

/**
 * The tools of the ${name} service, served by the gateway as \`${name}.<tool>\`
 * (docs/extending.md). Each declares a flat input schema (the gateway validates
 * arguments against it) and the least role a caller needs (the gateway checks it).
 */
export function ${camel(name)}Tools(): ExtensionToolDefinition[] {
  return [
    {
      name: 'echo',
      title: 'Echo a message',
      description: 'Returns the message it was given, with who sent it.',
      inputSchema: {
        type: 'object',
        additionalProperties: false,
        required: ['message'],
        properties: { message: { type: 'string', minLength: 1, maxLength: 1000, description: 'What to echo.' } },
      },
      annotations: { readOnlyHint: true, openWorldHint: false },
      minRole: 'viewer',
      async handle(args, ctx) {
        const message = String(args.message);
        if (message.trim() === '') throw new ExtensionToolError('The message is blank.');
        return { message, from: ctx.principal.subject };
      },
    },
  ];
}
`,
  'src/tools.test.ts': `import { ExtensionToolError, type ExtensionCallContext } from '@dagu-mcp/service-kit';
import { ${camel(name)}Tools } from './tools';

const ctx: ExtensionCallContext = {
  principal: { id: 'u1', subject: 'ada', role: 'viewer', credentialType: 'token' },
  deadline: Date.now() + 5000,
  signal: new AbortController().signal,
  sessionId: '',
  notify: async () => undefined,
  progress: async () => undefined,
};

describe('${name} tools', () => {
  test('echo returns the message and the caller', async () => {
    const [echo] = ${camel(name)}Tools();
    await expect(echo?.handle({ message: 'hi' }, ctx)).resolves.toEqual({ message: 'hi', from: 'ada' });
  });

  test('echo refuses a blank message as a tool error', async () => {
    const [echo] = ${camel(name)}Tools();
    await expect(echo?.handle({ message: '  ' }, ctx)).rejects.toBeInstanceOf(ExtensionToolError);
  });
});
`,
  'src/main.ts': `import { ExtensionService } from '@dagu-mcp/service-kit';
import { ${camel(name)}Tools } from './tools';

/**
 * The ${name} extension service: announces its tools to the platform over Redis; the
 * gateway serves them once an admin ran \`PUT /api/v1/extensions/${name} {"enabled": true}\`.
 *
 * | Variable | Meaning | Default |
 * | --- | --- | --- |
 * | \`REDIS_URL\` | the platform's Redis | \`redis://127.0.0.1:6379\` |
 * | \`BUS_PREFIX\` | the platform's bus prefix | \`dagu\` |
 */
const config = {
  REDIS_URL: process.env.REDIS_URL || 'redis://127.0.0.1:6379',
  BUS_PREFIX: process.env.BUS_PREFIX || 'dagu',
};

const service = new ExtensionService({
  redisUrl: config.REDIS_URL,
  prefix: config.BUS_PREFIX,
  name: '${name}',
  tools: ${camel(name)}Tools(),
});

service.start().then(
  () => process.stdout.write('${name} service announcing\\n'),
  (err: unknown) => {
    process.stderr.write(\`${name} service failed to start: \${String(err)}\\n\`);
    process.exit(1);
  },
);
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => void service.stop().finally(() => process.exit(0)));
}
`,
  Dockerfile: `# syntax=docker/dockerfile:1
# Image of the ${name} extension service. Build from the repository root:
#   docker build -f ${relative(ROOT, dir)}/Dockerfile -t dagu-mcp/${name}-service:local .
ARG NODE_IMAGE=node:20-bookworm-slim

FROM \${NODE_IMAGE} AS tools
ENV TURBO_TELEMETRY_DISABLED=1
RUN npm install --global pnpm@10.34.9 turbo@2.11.11

FROM tools AS prune
WORKDIR /repo
COPY . .
RUN turbo prune ${pkg} --docker

FROM tools AS build
WORKDIR /repo
COPY --from=prune /repo/out/json/ ./
COPY --from=prune /repo/out/pnpm-lock.yaml ./
RUN pnpm install --frozen-lockfile
COPY --from=prune /repo/out/full/ ./
COPY tsconfig.base.json ./
RUN turbo run build --filter=${pkg}...
RUN pnpm --filter=${pkg} deploy --prod --legacy ../app

FROM \${NODE_IMAGE} AS runtime
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /app ./
USER 1000:1000
STOPSIGNAL SIGTERM
CMD ["node", "dist/main.js"]
`,
  'compose.yaml': `# Run next to the platform: docker compose -f docker-compose.yml -f ${relative(ROOT, dir)}/compose.yaml up --build
# then enable it: PUT /api/v1/extensions/${name} {"enabled": true} (admin).
services:
  ${name}-service:
    image: dagu-mcp/${name}-service:\${DAGU_TAG:-local}
    build:
      context: .
      dockerfile: ${relative(ROOT, dir)}/Dockerfile
    restart: unless-stopped
    init: true
    read_only: true
    depends_on:
      redis:
        condition: service_healthy
    environment:
      REDIS_URL: redis://:\${REDIS_PASSWORD:-dagu}@redis:6379
      BUS_PREFIX: dagu
`,
  'k8s/deployment.yaml': `# kubectl apply -n <platform namespace> -f ${relative(ROOT, dir)}/k8s/deployment.yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: ${name}-service
  labels:
    app.kubernetes.io/name: ${name}-service
    app.kubernetes.io/part-of: dagu-mcp
spec:
  replicas: 2
  selector:
    matchLabels:
      app.kubernetes.io/name: ${name}-service
  template:
    metadata:
      labels:
        app.kubernetes.io/name: ${name}-service
        app.kubernetes.io/part-of: dagu-mcp
    spec:
      securityContext:
        runAsNonRoot: true
        runAsUser: 1000
      terminationGracePeriodSeconds: 30
      containers:
        - name: ${name}-service
          image: dagu-mcp/${name}-service:local
          env:
            - name: BUS_PREFIX
              value: dagu
            - name: REDIS_URL
              valueFrom:
                secretKeyRef:
                  name: dagu-mcp-secrets
                  key: REDIS_URL
          resources:
            requests:
              cpu: 50m
              memory: 64Mi
            limits:
              cpu: 500m
              memory: 256Mi
          securityContext:
            allowPrivilegeEscalation: false
            readOnlyRootFilesystem: true
`,
  'README.md': `# ${name} extension service

Generated by \`npm run new:service -- ${name}\` (docs/extending.md). Its tools are served by the
gateway as \`${name}.<tool>\` once an admin enabled it:

\`\`\`sh
curl -X PUT -H "Authorization: Bearer $ADMIN_TOKEN" -H 'content-type: application/json' \\
  -d '{"enabled": true}' http://localhost:8080/api/v1/extensions/${name}
\`\`\`

- \`src/tools.ts\`: the tools (flat input schema, minimum role, handler).
- \`src/main.ts\`: the service (\`REDIS_URL\`, \`BUS_PREFIX\`).
- \`Dockerfile\`, \`compose.yaml\`, \`k8s/deployment.yaml\`: deployment next to the platform.
`,
};

for (const [file, text] of Object.entries(files)) {
  const path = join(dir, file);
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
}
console.log(`created ${relative(process.cwd(), dir) || dir} (${Object.keys(files).length} files).`);
console.log(
  `next: npx -y pnpm@10.34.9 install, then npm run build, then enable it with PUT /api/v1/extensions/${name}.`,
);

function camel(text) {
  return text.replace(/-([a-z0-9])/g, (_, c) => c.toUpperCase());
}
