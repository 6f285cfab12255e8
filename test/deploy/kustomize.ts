import { spawnSync } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { z } from 'zod';

/** A Kubernetes object as plain data. */
export type K8sObject = Record<string, unknown> & {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string };
};

const ObjectSchema = z
  .object({
    apiVersion: z.string(),
    kind: z.string(),
    metadata: z.object({ name: z.string(), namespace: z.string().optional() }).loose(),
  })
  .loose();

const KustomizationSchema = z
  .object({
    apiVersion: z.string(),
    kind: z.literal('Kustomization'),
    namespace: z.string().optional(),
    resources: z.array(z.string()).default([]),
    images: z
      .array(z.object({ name: z.string(), newName: z.string().optional(), newTag: z.string().optional() }).strict())
      .default([]),
    patches: z.array(z.object({ path: z.string() }).strict()).default([]),
  })
  // The subset of kustomize this repo's manifests use; anything else must fail here, not be ignored.
  .strict();

/** Every YAML document of `file` as a Kubernetes object (empty documents skipped). */
export function loadObjects(file: string): K8sObject[] {
  return parseAllDocuments(readFileSync(file, 'utf8'))
    .map((doc): unknown => doc.toJS())
    .filter((doc) => doc !== null && doc !== undefined)
    .map((doc) => ObjectSchema.parse(doc));
}

const CLUSTER_SCOPED = new Set([
  'Namespace',
  'ClusterRole',
  'ClusterRoleBinding',
  'CustomResourceDefinition',
  'PersistentVolume',
  'StorageClass',
]);
/** Lists that strategic merge patches merge by a key (the ones this repo patches); other lists are replaced. */
const MERGE_KEYS: Readonly<Record<string, string>> = {
  containers: 'name',
  initContainers: 'name',
  env: 'name',
  volumes: 'name',
  volumeMounts: 'mountPath',
  ports: 'containerPort',
};

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A strategic merge patch, as far as this repo's patches need: maps merge, keyed lists merge, `null` deletes. */
export function strategicMerge(base: unknown, patch: unknown, field = ''): unknown {
  if (isRecord(base) && isRecord(patch)) {
    const merged: Record<string, unknown> = { ...base };
    for (const [key, value] of Object.entries(patch)) {
      if (value === null) delete merged[key];
      else merged[key] = strategicMerge(base[key], value, key);
    }
    return merged;
  }
  const key = MERGE_KEYS[field];
  if (Array.isArray(base) && Array.isArray(patch) && key !== undefined) {
    const merged = [...base];
    for (const item of patch) {
      const at = merged.findIndex((existing) => isRecord(existing) && isRecord(item) && existing[key] === item[key]);
      if (at < 0) merged.push(item);
      else merged[at] = strategicMerge(merged[at], item);
    }
    return merged;
  }
  return patch;
}

function setImages(node: unknown, images: z.infer<typeof KustomizationSchema>['images']): unknown {
  if (Array.isArray(node)) return node.map((item) => setImages(item, images));
  if (!isRecord(node)) return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === 'image' && typeof value === 'string') {
      const at = value.lastIndexOf(':');
      const hasTag = at > value.lastIndexOf('/');
      const name = hasTag ? value.slice(0, at) : value;
      const rule = images.find((image) => image.name === name);
      out[key] =
        rule === undefined
          ? value
          : `${rule.newName ?? name}:${rule.newTag ?? (hasTag ? value.slice(at + 1) : 'latest')}`;
    } else {
      out[key] = setImages(value, images);
    }
  }
  return out;
}

/**
 * Builds a kustomization directory without kustomize: `resources` (files
 * and directories), strategic merge `patches` matched by kind and name,
 * `images` and `namespace`. Any other field fails the parse, so a manifest
 * change that needs more is noticed. Cross-checked against `kubectl
 * kustomize` where that is installed (test/deploy/k8s.test.ts).
 */
export function buildKustomizationLite(dir: string): K8sObject[] {
  const kustomization = KustomizationSchema.parse(loadObjectsRaw(join(dir, 'kustomization.yaml')));
  let objects: K8sObject[] = [];
  for (const resource of kustomization.resources) {
    const path = join(dir, resource);
    objects.push(...(statSync(path).isDirectory() ? buildKustomizationLite(path) : loadObjects(path)));
  }
  for (const { path } of kustomization.patches) {
    for (const patch of loadObjects(join(dir, path))) {
      const at = objects.findIndex((o) => o.kind === patch.kind && o.metadata.name === patch.metadata.name);
      if (at < 0) throw new Error(`${dir}/${path}: no ${patch.kind} ${patch.metadata.name} to patch`);
      objects[at] = ObjectSchema.parse(strategicMerge(objects[at], patch));
    }
  }
  objects = objects.map((o) => ObjectSchema.parse(setImages(o, kustomization.images)));
  const namespace = kustomization.namespace;
  if (namespace !== undefined) {
    objects = objects.map((o) => (CLUSTER_SCOPED.has(o.kind) ? o : { ...o, metadata: { ...o.metadata, namespace } }));
  }
  return objects;
}

function loadObjectsRaw(file: string): unknown {
  const [first] = parseAllDocuments(readFileSync(file, 'utf8'));
  return first?.toJS();
}

/** True when `kubectl kustomize` runs here. */
export function hasKubectlKustomize(): boolean {
  return spawnSync('kubectl', ['kustomize', '--help'], { encoding: 'utf8' }).status === 0;
}

/**
 * Builds `dir` with `kubectl kustomize` (the real kustomize).
 * @throws Error with kustomize's message when the build fails
 */
export function buildWithKubectl(dir: string): K8sObject[] {
  const result = spawnSync('kubectl', ['kustomize', dir], { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`kubectl kustomize ${dir} failed: ${result.stderr}`);
  return parseAllDocuments(result.stdout)
    .map((doc): unknown => doc.toJS())
    .filter((doc) => doc !== null && doc !== undefined)
    .map((doc) => ObjectSchema.parse(doc));
}

/** `kind/namespace/name`, the identity of an object in a build. */
export function objectId(o: K8sObject): string {
  return `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`;
}
