/**
 * infra/k8s, checked offline (issue "Kubernetes"): each overlay builds (with
 * `kubectl kustomize` where installed, and always with the small builder in
 * kustomize.ts, whose output must then match kustomize's); every object
 * matches the Kubernetes schema of its kind; every app Deployment has probes
 * on the app's own health endpoints and ports, requests and limits, a
 * non-root read-only security context and a termination grace above its
 * drain; HPA, PDB and Service exist per app; Secrets are referenced, never
 * defined; every variable a pod gets is known to its app's config schema;
 * the Ingress is SSE-friendly for /mcp.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { APPS, appPorts, environmentProblems, ROOT, type AppName } from './app-config';
import {
  ConfigMapSchema,
  DeploymentSchema,
  HpaSchema,
  IngressSchema,
  PdbSchema,
  ServiceSchema,
  validateAgainstKubernetesSchema,
  type Container,
  type DeploymentModel,
} from './k8s-model';
import { buildKustomizationLite, buildWithKubectl, hasKubectlKustomize, objectId, type K8sObject } from './kustomize';

const K8S = join(ROOT, 'infra', 'k8s');
const OVERLAYS = { dev: 'dagu-mcp-dev', prod: 'dagu-mcp' } as const;
const SECRET_NAME = 'dagu-mcp-secrets';
/** Sample values for the keys of `dagu-mcp-secrets` (docs/deployment.md lists them). */
const SECRET_SAMPLES: Readonly<Record<string, string>> = {
  DATABASE_ADMIN_URL: 'postgres://postgres:secret@db.internal:5432/dagu',
  DATABASE_URL_GATEWAY: 'postgres://dagu_gateway:secret@db.internal:5432/dagu',
  DATABASE_URL_DAG: 'postgres://dagu_dag:secret@db.internal:5432/dagu',
  DATABASE_URL_RUN: 'postgres://dagu_run:secret@db.internal:5432/dagu',
  DATABASE_URL_WIKI: 'postgres://dagu_wiki:secret@db.internal:5432/dagu',
  DATABASE_URL_AGENT: 'postgres://dagu_agent:secret@db.internal:5432/dagu',
  // Optional keys: a streaming replica for lag-tolerant reads (docs/deployment.md "Read replica").
  DATABASE_READ_URL_GATEWAY: 'postgres://dagu_gateway:secret@db-replica.internal:5432/dagu',
  DATABASE_READ_URL_DAG: 'postgres://dagu_dag:secret@db-replica.internal:5432/dagu',
  DATABASE_READ_URL_RUN: 'postgres://dagu_run:secret@db-replica.internal:5432/dagu',
  DATABASE_READ_URL_WIKI: 'postgres://dagu_wiki:secret@db-replica.internal:5432/dagu',
  REDIS_PASSWORD: 'secret',
  REDIS_URL: 'redis://:secret@redis.internal:6379',
  ADMIN_PASSWORD: 'a-long-admin-password',
  TOKEN_SECRET: 'x'.repeat(40),
  DAGU_ENCRYPTION_KEY: `k1:${Buffer.alloc(32, 7).toString('base64')}`,
  POSTGRES_PASSWORD: 'secret',
};
/** The apps' own graceful-shutdown limit, in seconds (packages/runtime/src/shutdown/shutdown.ts). */
const SHUTDOWN_GRACE_S =
  Number(
    /graceMs = ([\d_]+)/
      .exec(readFileSync(join(ROOT, 'packages/runtime/src/shutdown/shutdown.ts'), 'utf8'))?.[1]
      ?.replace(/_/g, ''),
  ) / 1000;
const kubectl = hasKubectlKustomize();

function build(dir: string): K8sObject[] {
  return kubectl ? buildWithKubectl(dir) : buildKustomizationLite(dir);
}

function ofKind(objects: readonly K8sObject[], kind: string): K8sObject[] {
  return objects.filter((o) => o.kind === kind);
}

function appDeployment(objects: readonly K8sObject[], app: AppName): DeploymentModel {
  const found = objects.find((o) => o.kind === 'Deployment' && o.metadata.name === app);
  if (found === undefined) throw new Error(`no Deployment ${app}`);
  return DeploymentSchema.parse(found);
}

function mainContainer(deployment: DeploymentModel): Container {
  const container = deployment.spec.template.spec.containers.find((c) => c.name === deployment.metadata.name);
  if (container === undefined) throw new Error(`${deployment.metadata.name}: no container of that name`);
  return container;
}

/** The environment the container gets: envFrom ConfigMaps, then env (secrets as sample values). */
function containerEnvironment(objects: readonly K8sObject[], container: Container): Record<string, string> {
  const env: Record<string, string> = {};
  for (const source of container.envFrom) {
    const name = source.configMapRef?.name;
    const configMap = objects.find((o) => o.kind === 'ConfigMap' && o.metadata.name === name);
    if (configMap === undefined)
      throw new Error(`${container.name}: envFrom ConfigMap ${String(name)} is not in the build`);
    Object.assign(env, ConfigMapSchema.parse(configMap).data);
  }
  for (const variable of container.env) {
    const ref = variable.valueFrom?.secretKeyRef;
    if (ref !== undefined) {
      const sample = SECRET_SAMPLES[ref.key];
      if (sample === undefined)
        throw new Error(`${container.name}: secret key ${ref.key} has no sample in this test (document it)`);
      env[variable.name] = sample;
    } else {
      env[variable.name] = variable.value ?? '';
    }
  }
  return env;
}

function containerPort(container: Container, port: string | number | undefined): number | undefined {
  return typeof port === 'number' ? port : container.ports.find((p) => p.name === port)?.containerPort;
}

function hasLabels(labels: Readonly<Record<string, string>>, wanted: Readonly<Record<string, string>>): boolean {
  return Object.entries(wanted).every(([key, value]) => labels[key] === value);
}

describe('infra/k8s base', () => {
  it('builds, and every object matches the Kubernetes schema of its kind', () => {
    const objects = build(join(K8S, 'base'));
    expect(objects.length).toBeGreaterThan(0);
    for (const object of objects) validateAgainstKubernetesSchema(object);
  });
});

describe.each(Object.entries(OVERLAYS))('infra/k8s overlay %s', (overlay, namespace) => {
  const dir = join(K8S, 'overlays', overlay);
  let objects: K8sObject[];

  beforeAll(() => {
    objects = build(dir);
  });

  it(`builds the same with the small builder as with kustomize${kubectl ? '' : ' (kubectl not installed: small builder only)'}`, () => {
    const lite = buildKustomizationLite(dir);
    expect(lite.map(objectId).sort()).toEqual(objects.map(objectId).sort());
    if (kubectl) {
      for (const object of objects) expect(lite.find((o) => objectId(o) === objectId(object))).toEqual(object);
    }
  });

  it('every object matches the Kubernetes schema of its kind', () => {
    for (const object of objects) validateAgainstKubernetesSchema(object);
  });

  it(`puts everything in namespace ${namespace}, which enforces the baseline Pod Security Standard and audits restricted`, () => {
    const [ns, ...more] = ofKind(objects, 'Namespace');
    expect(more).toEqual([]);
    expect(ns?.metadata.name).toBe(namespace);
    // baseline, not restricted: run-service is root with six capabilities to switch runs to their uids (docs/security.md).
    expect(ns?.metadata).toMatchObject({
      labels: {
        'pod-security.kubernetes.io/enforce': 'baseline',
        'pod-security.kubernetes.io/audit': 'restricted',
        'pod-security.kubernetes.io/warn': 'restricted',
      },
    });
    for (const o of objects.filter((x) => x.kind !== 'Namespace'))
      expect(`${objectId(o)} ${o.metadata.namespace ?? ''}`).toBe(`${objectId(o)} ${namespace}`);
  });

  it('defines no Secret and references only dagu-mcp-secrets; secret-like variables come from it', () => {
    expect(ofKind(objects, 'Secret')).toEqual([]);
    for (const deployment of ofKind(objects, 'Deployment').map((o) => DeploymentSchema.parse(o))) {
      for (const container of deployment.spec.template.spec.containers) {
        expect(container.envFrom.filter((source) => source.secretRef !== undefined)).toEqual([]);
        for (const variable of container.env) {
          const ref = variable.valueFrom?.secretKeyRef;
          if (ref !== undefined) expect(ref.name).toBe(SECRET_NAME);
          if (/PASSWORD|SECRET|TOKEN/.test(variable.name))
            expect(`${variable.name} from ${ref?.name ?? 'a literal'}`).toBe(`${variable.name} from ${SECRET_NAME}`);
        }
      }
    }
    for (const configMap of ofKind(objects, 'ConfigMap').map((o) => ConfigMapSchema.parse(o))) {
      expect(Object.keys(configMap.data).filter((key) => /PASSWORD|SECRET|TOKEN/.test(key))).toEqual([]);
      expect(Object.values(configMap.data).filter((value) => /:\/\/[^/\s]*:[^/\s]*@/.test(value))).toEqual([]);
    }
  });

  it('gives the gateway its secrets-at-rest key from dagu-mcp-secrets, not optional (it does not start without one)', () => {
    const gateway = ofKind(objects, 'Deployment')
      .map((o) => DeploymentSchema.parse(o))
      .find((d) => d.metadata.name === 'mcp-gateway');
    const key = gateway?.spec.template.spec.containers[0]?.env.find((v) => v.name === 'DAGU_ENCRYPTION_KEY');
    expect(key?.valueFrom?.secretKeyRef).toEqual({ name: SECRET_NAME, key: 'DAGU_ENCRYPTION_KEY' });
  });

  it('every Deployment has requests and limits, probes, and a non-root (run-service: root with six capabilities), read-only, no-privilege security context', () => {
    for (const deployment of ofKind(objects, 'Deployment').map((o) => DeploymentSchema.parse(o))) {
      const pod = deployment.spec.template.spec;
      const stepLauncher = deployment.metadata.name === 'run-service';
      expect({ name: deployment.metadata.name, pod: pod.securityContext }).toMatchObject({
        name: deployment.metadata.name,
        pod: { runAsNonRoot: !stepLauncher, seccompProfile: { type: 'RuntimeDefault' } },
      });
      if (stepLauncher) expect(pod.securityContext?.runAsUser).toBe(0);
      else expect(pod.securityContext?.runAsUser).toBeGreaterThan(0);
      expect(pod.automountServiceAccountToken).toBe(false);
      for (const container of pod.containers) {
        expect({ container: container.name, resources: container.resources }).toEqual({
          container: container.name,
          resources: {
            requests: { cpu: expect.anything(), memory: expect.anything() },
            limits: { cpu: expect.anything(), memory: expect.anything() },
          },
        });
        // run-service switches to its step user (docs/security.md): exactly these, nothing else.
        const capabilities = stepLauncher
          ? { drop: ['ALL'], add: ['SETUID', 'SETGID', 'KILL', 'CHOWN', 'FOWNER', 'DAC_OVERRIDE'] }
          : { drop: ['ALL'] };
        expect({ container: container.name, securityContext: container.securityContext }).toEqual({
          container: container.name,
          securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities },
        });
        expect(container.livenessProbe).toBeDefined();
        expect(container.readinessProbe).toBeDefined();
      }
    }
  });

  it('connects each app as its own PostgreSQL role (a key of its own) beside the admin URL, and to Redis with a password', () => {
    const keys = new Set<string>();
    for (const app of APPS) {
      const container = mainContainer(appDeployment(objects, app));
      const refOf = (name: string) => container.env.find((v) => v.name === name)?.valueFrom?.secretKeyRef;
      expect(refOf('DATABASE_ADMIN_URL')).toEqual({ name: SECRET_NAME, key: 'DATABASE_ADMIN_URL' });
      const own = refOf('DATABASE_URL');
      expect(own?.key).toMatch(/^DATABASE_URL_[A-Z]+$/);
      keys.add(own?.key ?? '');
      const env = containerEnvironment(objects, container);
      expect(new URL(env.DATABASE_URL ?? '').username).not.toBe(new URL(env.DATABASE_ADMIN_URL ?? '').username);
      expect(new URL(env.REDIS_URL ?? '').password).not.toBe('');
    }
    expect(keys.size).toBe(APPS.length);
    // The dev overlay's own Redis (prod brings its own) asks for the password of the secret.
    const redis = objects.find((o) => o.kind === 'Deployment' && o.metadata.name === 'redis');
    if (redis !== undefined) expect(JSON.stringify(redis)).toContain('"--requirepass","$(REDIS_PASSWORD)"');
  });

  it('gives every run-service replica one shared work directory: RUN_WORK_DIR on the run-work claim, ReadWriteMany in prod (docs/deployment.md)', () => {
    const deployment = appDeployment(objects, 'run-service');
    const container = mainContainer(deployment);
    const workDir = containerEnvironment(objects, container).RUN_WORK_DIR;
    const pod = JSON.stringify(deployment.spec.template.spec);
    const mounts = (
      JSON.parse(pod) as { containers: Array<{ name: string; volumeMounts?: unknown[] }>; volumes?: unknown[] }
    ).containers.find((c) => c.name === 'run-service')?.volumeMounts;
    expect(mounts).toContainEqual({ name: 'run-work', mountPath: workDir });
    expect(pod).toContain('"persistentVolumeClaim":{"claimName":"run-work"}');
    const claim = objects.find((o) => o.kind === 'PersistentVolumeClaim' && o.metadata.name === 'run-work');
    expect(JSON.stringify(claim)).toContain(overlay === 'prod' ? '"ReadWriteMany"' : '"ReadWriteOnce"');
  });

  it('runs the steps of each run of run-service as an unprivileged uid of their own (issue 43)', () => {
    const container = mainContainer(appDeployment(objects, 'run-service'));
    expect(containerEnvironment(objects, container).RUN_STEP_UID_RANGE).toBe('200000-265535');
  });

  describe.each(APPS)('%s', (app) => {
    let deployment: DeploymentModel;
    let container: Container;
    let env: Record<string, string>;

    beforeAll(() => {
      deployment = appDeployment(objects, app);
      container = mainContainer(deployment);
      env = containerEnvironment(objects, container);
    });

    it('gets only variables its config schema knows, and every required one', () => {
      expect(environmentProblems(app, env)).toEqual([]);
    });

    it("probes the app's own /healthz (startup, liveness) and /readyz (readiness) on its health port", () => {
      const { health } = appPorts(app, env);
      const probes = {
        startup: container.startupProbe?.httpGet,
        liveness: container.livenessProbe?.httpGet,
        readiness: container.readinessProbe?.httpGet,
      };
      expect({ path: probes.startup?.path, port: containerPort(container, probes.startup?.port) }).toEqual({
        path: '/healthz',
        port: health,
      });
      expect({ path: probes.liveness?.path, port: containerPort(container, probes.liveness?.port) }).toEqual({
        path: '/healthz',
        port: health,
      });
      expect({ path: probes.readiness?.path, port: containerPort(container, probes.readiness?.port) }).toEqual({
        path: '/readyz',
        port: health,
      });
    });

    it('declares its metrics port for Prometheus (never the public port)', () => {
      const ports = appPorts(app, env);
      const annotations = deployment.spec.template.metadata.annotations;
      expect(annotations).toMatchObject({
        'prometheus.io/scrape': 'true',
        'prometheus.io/path': '/metrics',
        'prometheus.io/port': String(ports.metrics),
      });
      expect(container.ports.map((p) => p.containerPort)).toContain(ports.metrics);
      if (ports.public !== undefined) expect(ports.metrics).not.toBe(ports.public);
      // The apps default to loopback (issue 17 "Browser rules"); Prometheus scrapes from outside the pod.
      expect(env[app === 'mcp-gateway' ? 'METRICS_HOST' : 'OPS_HOST']).toBe('0.0.0.0');
    });

    it('gives a termination grace period above its longest graceful drain (preStop + shutdown limit)', () => {
      const preStop = container.lifecycle?.preStop?.exec?.command ?? [];
      const preStopSeconds = preStop[0] === 'sleep' ? Number(preStop[1]) : 0;
      expect(SHUTDOWN_GRACE_S).toBeGreaterThan(0);
      expect(deployment.spec.template.spec.terminationGracePeriodSeconds).toBeGreaterThan(
        preStopSeconds + SHUTDOWN_GRACE_S,
      );
    });

    it('runs a pinned image set by the overlay, leaves the replica count to its HPA, and has a PDB and a Service', () => {
      expect(container.image).toMatch(
        overlay === 'prod' ? new RegExp(`/dagu-mcp/${app}:\\d+\\.\\d+\\.\\d+$`) : new RegExp(`^dagu-mcp/${app}:local$`),
      );
      expect(deployment.spec.replicas).toBeUndefined();
      const podLabels = deployment.spec.template.metadata.labels;
      expect(hasLabels(podLabels, deployment.spec.selector.matchLabels)).toBe(true);

      const hpa = ofKind(objects, 'HorizontalPodAutoscaler')
        .map((o) => HpaSchema.parse(o))
        .find((h) => h.spec.scaleTargetRef.name === app);
      expect(hpa?.spec.scaleTargetRef.kind).toBe('Deployment');
      expect(hpa?.spec.maxReplicas).toBeGreaterThanOrEqual(hpa?.spec.minReplicas ?? 1);

      const pdb = ofKind(objects, 'PodDisruptionBudget')
        .map((o) => PdbSchema.parse(o))
        .find((p) => hasLabels(podLabels, p.spec.selector.matchLabels));
      expect(pdb).toBeDefined();

      const service = ofKind(objects, 'Service')
        .map((o) => ServiceSchema.parse(o))
        .find((s) => s.metadata.name === app);
      expect(service !== undefined && hasLabels(podLabels, service.spec.selector)).toBe(true);
      for (const port of service?.spec.ports ?? []) expect(containerPort(container, port.targetPort)).toBe(port.port);
    });
  });

  it('routes /mcp and /api/v1 to the gateway http port with SSE-friendly ingress settings', () => {
    const [ingress, ...more] = ofKind(objects, 'Ingress').map((o) => IngressSchema.parse(o));
    expect(more).toEqual([]);
    const annotations = ingress?.metadata.annotations ?? {};
    expect(annotations['nginx.ingress.kubernetes.io/proxy-buffering']).toBe('off');
    expect(Number(annotations['nginx.ingress.kubernetes.io/proxy-read-timeout'])).toBeGreaterThanOrEqual(3600);
    expect(Number(annotations['nginx.ingress.kubernetes.io/proxy-send-timeout'])).toBeGreaterThanOrEqual(3600);
    const paths = (ingress?.spec.rules ?? []).flatMap((rule) => rule.http.paths);
    expect(paths.map((p) => [p.path, p.backend.service.name, p.backend.service.port.name])).toEqual([
      ['/mcp', 'mcp-gateway', 'http'],
      ['/api/v1', 'mcp-gateway', 'http'],
    ]);
    if (overlay === 'prod') {
      expect(ingress?.spec.tls).toEqual([{ hosts: [ingress?.spec.rules[0]?.host], secretName: 'dagu-mcp-tls' }]);
    }
  });
});
