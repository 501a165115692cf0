// Validates prometheus-operator resources (JSON array on stdin) with the compiled schemas of
// @kubernetes-models/prometheus-operator; prints one JSON line per resource: its kind, name and
// the error, null when valid. Used by tests/k8s/test_schemas.py.
import { readFileSync } from "node:fs";
import { PodMonitor } from "@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/PodMonitor";
import { PrometheusRule } from "@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/PrometheusRule";
import { ServiceMonitor } from "@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/ServiceMonitor";

const models = { PodMonitor, PrometheusRule, ServiceMonitor };
for (const resource of JSON.parse(readFileSync(0, "utf8"))) {
  const Model = models[resource.kind];
  let error = null;
  if (resource.apiVersion !== "monitoring.coreos.com/v1" || Model === undefined) {
    error = `no schema for ${resource.apiVersion} ${resource.kind}`;
  } else {
    try {
      new Model(resource).validate();
    } catch (e) {
      error = e.message;
    }
  }
  console.log(JSON.stringify({ kind: resource.kind, name: resource.metadata?.name, error }));
}
