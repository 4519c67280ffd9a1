import { readFileSync } from 'node:fs';
import { ServiceMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/ServiceMonitor';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { Namespace } from 'kubernetes-models/v1/Namespace';
import { Secret } from 'kubernetes-models/v1/Secret';
import { Service } from 'kubernetes-models/v1/Service';
import { parseAllDocuments } from 'yaml';
import type { K8sObject } from '../manifests.js';

/*
 * The Kubernetes API schema of kubernetes-models 4.5.1 (the v1.33 API, compiled to validators;
 * 5.x, for v1.36, needs Node 22) and the Prometheus Operator's ServiceMonitor schema
 * (@kubernetes-models/prometheus-operator 4.4.4), for every kind `svc deploy` writes.
 */

// biome-ignore lint/suspicious/noExplicitAny: each model's constructor takes its own typed object.
type Model = new (data: any) => { validate(): void };
const models: Record<string, Model> = {
  'v1/ConfigMap': ConfigMap,
  'v1/Namespace': Namespace,
  'v1/Secret': Secret,
  'v1/Service': Service,
  'apps/v1/Deployment': Deployment,
  'autoscaling/v2/HorizontalPodAutoscaler': HorizontalPodAutoscaler,
  'networking.k8s.io/v1/NetworkPolicy': NetworkPolicy,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
  'monitoring.coreos.com/v1/ServiceMonitor': ServiceMonitor,
};

/** Throws when the object does not validate against its kind's schema (or the kind has none). */
export function validate(o: K8sObject): void {
  const Model = models[`${o.apiVersion}/${o.kind}`];
  if (!Model) throw new Error(`no schema for ${o.apiVersion} ${o.kind}`);
  new Model(o).validate();
}

/** Every YAML document of a file, as plain data. */
export const readDocs = (file: string): K8sObject[] =>
  parseAllDocuments(readFileSync(file, 'utf8')).map((d) => d.toJS() as K8sObject);
