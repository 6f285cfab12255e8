import { z } from 'zod';
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { Namespace } from 'kubernetes-models/v1/Namespace';
import { PersistentVolumeClaim } from 'kubernetes-models/v1/PersistentVolumeClaim';
import { Service } from 'kubernetes-models/v1/Service';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import { Ingress } from 'kubernetes-models/networking.k8s.io/v1/Ingress';
import type { K8sObject } from './kustomize';

/**
 * Validates an object against the Kubernetes OpenAPI schema of its
 * apiVersion and kind (kubernetes-models: types, required fields, formats;
 * unknown fields are not rejected, unlike `kubeconform -strict`).
 *
 * @throws Error naming the object and the schema violations, or the unknown kind
 */
export function validateAgainstKubernetesSchema(object: K8sObject): void {
  const id = `${object.apiVersion} ${object.kind} ${object.metadata.name}`;
  const validators: Record<string, (data: K8sObject) => { validate(): void }> = {
    'v1/ConfigMap': (data) => new ConfigMap(data),
    'v1/Namespace': (data) => new Namespace(data),
    'v1/PersistentVolumeClaim': (data) => new PersistentVolumeClaim(data),
    'v1/Service': (data) => new Service(data),
    'apps/v1/Deployment': (data) => new Deployment(data),
    'autoscaling/v2/HorizontalPodAutoscaler': (data) => new HorizontalPodAutoscaler(data),
    'policy/v1/PodDisruptionBudget': (data) => new PodDisruptionBudget(data),
    'networking.k8s.io/v1/Ingress': (data) => new Ingress(data),
  };
  const make = validators[`${object.apiVersion}/${object.kind}`];
  if (make === undefined) throw new Error(`${id}: no schema known to this test; add it to k8s-model.ts`);
  try {
    make(object).validate();
  } catch (err) {
    throw new Error(`${id}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
}

const labels = z.record(z.string(), z.string());
const port = z.union([z.string(), z.number()]);
const ProbeSchema = z
  .object({
    httpGet: z.object({ path: z.string(), port }).loose().optional(),
    exec: z.object({ command: z.array(z.string()) }).optional(),
    tcpSocket: z.object({ port }).optional(),
    periodSeconds: z.number().optional(),
    failureThreshold: z.number().optional(),
  })
  .loose();
const quantity = z.record(z.string(), z.union([z.string(), z.number()]));
export const ContainerSchema = z
  .object({
    name: z.string(),
    image: z.string(),
    ports: z.array(z.object({ name: z.string().optional(), containerPort: z.number() }).loose()).default([]),
    env: z
      .array(
        z
          .object({
            name: z.string(),
            value: z.string().optional(),
            valueFrom: z
              .object({
                secretKeyRef: z
                  .object({ name: z.string(), key: z.string(), optional: z.boolean().optional() })
                  .optional(),
              })
              .loose()
              .optional(),
          })
          .loose(),
      )
      .default([]),
    envFrom: z
      .array(
        z
          .object({
            configMapRef: z.object({ name: z.string() }).optional(),
            secretRef: z.object({ name: z.string() }).optional(),
          })
          .loose(),
      )
      .default([]),
    startupProbe: ProbeSchema.optional(),
    livenessProbe: ProbeSchema.optional(),
    readinessProbe: ProbeSchema.optional(),
    lifecycle: z
      .object({
        preStop: z
          .object({ exec: z.object({ command: z.array(z.string()) }).optional() })
          .loose()
          .optional(),
      })
      .loose()
      .optional(),
    resources: z.object({ requests: quantity.optional(), limits: quantity.optional() }).optional(),
    securityContext: z
      .object({
        allowPrivilegeEscalation: z.boolean().optional(),
        readOnlyRootFilesystem: z.boolean().optional(),
        capabilities: z
          .object({ drop: z.array(z.string()).optional() })
          .loose()
          .optional(),
      })
      .loose()
      .optional(),
  })
  .loose();
export type Container = z.infer<typeof ContainerSchema>;

export const DeploymentSchema = z
  .object({
    metadata: z.object({ name: z.string(), labels: labels.default({}) }).loose(),
    spec: z
      .object({
        replicas: z.number().optional(),
        selector: z.object({ matchLabels: labels }),
        template: z.object({
          metadata: z.object({ labels, annotations: labels.default({}) }).loose(),
          spec: z
            .object({
              terminationGracePeriodSeconds: z.number().optional(),
              automountServiceAccountToken: z.boolean().optional(),
              securityContext: z
                .object({
                  runAsNonRoot: z.boolean().optional(),
                  runAsUser: z.number().optional(),
                  seccompProfile: z.object({ type: z.string() }).optional(),
                })
                .loose()
                .optional(),
              containers: z.array(ContainerSchema),
            })
            .loose(),
        }),
      })
      .loose(),
  })
  .loose();
export type DeploymentModel = z.infer<typeof DeploymentSchema>;

export const ServiceSchema = z
  .object({
    metadata: z.object({ name: z.string() }).loose(),
    spec: z
      .object({
        selector: labels,
        ports: z.array(z.object({ name: z.string().optional(), port: z.number(), targetPort: port.optional() })),
      })
      .loose(),
  })
  .loose();

export const HpaSchema = z
  .object({
    metadata: z.object({ name: z.string() }).loose(),
    spec: z
      .object({
        scaleTargetRef: z.object({ kind: z.string(), name: z.string() }),
        minReplicas: z.number().optional(),
        maxReplicas: z.number(),
      })
      .loose(),
  })
  .loose();

export const PdbSchema = z
  .object({
    metadata: z.object({ name: z.string() }).loose(),
    spec: z
      .object({
        selector: z.object({ matchLabels: labels }),
        minAvailable: port.optional(),
        maxUnavailable: port.optional(),
      })
      .loose(),
  })
  .loose();

export const IngressSchema = z
  .object({
    metadata: z.object({ name: z.string(), annotations: labels.default({}) }).loose(),
    spec: z
      .object({
        tls: z
          .array(z.object({ hosts: z.array(z.string()).optional(), secretName: z.string().optional() }))
          .default([]),
        rules: z.array(
          z
            .object({
              host: z.string().optional(),
              http: z.object({
                paths: z.array(
                  z.object({
                    path: z.string(),
                    pathType: z.string(),
                    backend: z.object({
                      service: z.object({ name: z.string(), port: z.object({ name: z.string() }).loose() }),
                    }),
                  }),
                ),
              }),
            })
            .loose(),
        ),
      })
      .loose(),
  })
  .loose();

export const ConfigMapSchema = z
  .object({ metadata: z.object({ name: z.string() }).loose(), data: labels.default({}) })
  .loose();
