// Validate Kubernetes custom resources with the validators @kubernetes-models generates from the
// upstream Go API types (the same types controller-gen turns into the published CRDs):
// github.com/tommy351/kubernetes-models-ts, third-party/karpenter and third-party/prometheus-operator, and
// third-party/keda for KEDA's ScaledObject and TriggerAuthentication (v2 models), and
// third-party/gke for GKE's ComputeClass (Google publishes no CRD file; that schema lacks some fields of
// Google's reference, which tests/test_compute_class.py checks against the reference's field names).
// They check structure (types, enums, required fields, patterns, bounds) but no CEL rules, and accept
// unknown fields. The CEL rules and the strict unknown-field check run against the CRDs themselves
// where ../shared/reference exists (tests/crds.py). Only kinds gpuplane emits are listed (a test checks
// that each is emitted somewhere).
//
// Protocol: each stdin line is a JSON array of objects; the matching stdout line is a JSON array with,
// per object, a list of error strings (empty when it validates). One process serves a whole test session.
import { createInterface } from "node:readline";
import { ComputeClass } from "@kubernetes-models/gke/cloud.google.com/v1/ComputeClass";
import { EC2NodeClass } from "@kubernetes-models/karpenter/karpenter.k8s.aws/v1/EC2NodeClass";
import { NodePool } from "@kubernetes-models/karpenter/karpenter.sh/v1/NodePool";
import { NodeOverlay } from "@kubernetes-models/karpenter/karpenter.sh/v1alpha1/NodeOverlay";
import { ScaledObject } from "@kubernetes-models/keda/keda.sh/v1alpha1/ScaledObject";
import { TriggerAuthentication } from "@kubernetes-models/keda/keda.sh/v1alpha1/TriggerAuthentication";
import { PodMonitor } from "@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/PodMonitor";
import { PrometheusRule } from "@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/PrometheusRule";
import { ServiceMonitor } from "@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/ServiceMonitor";

const MODELS = {
  "cloud.google.com/v1 ComputeClass": ComputeClass,
  "karpenter.k8s.aws/v1 EC2NodeClass": EC2NodeClass,
  "karpenter.sh/v1 NodePool": NodePool,
  "karpenter.sh/v1alpha1 NodeOverlay": NodeOverlay,
  "keda.sh/v1alpha1 ScaledObject": ScaledObject,
  "keda.sh/v1alpha1 TriggerAuthentication": TriggerAuthentication,
  "monitoring.coreos.com/v1 PodMonitor": PodMonitor,
  "monitoring.coreos.com/v1 PrometheusRule": PrometheusRule,
  "monitoring.coreos.com/v1 ServiceMonitor": ServiceMonitor,
};

function errorsOf(obj) {
  const Model = MODELS[`${obj.apiVersion} ${obj.kind}`];
  if (Model === undefined) return [`no validator for ${obj.apiVersion} ${obj.kind}`];
  try {
    new Model(obj).validate();
    return [];
  } catch (err) {
    const details = Array.isArray(err.errors) ? err.errors : [];
    if (details.length === 0) return [String(err.message || err)];
    return details.map((e) => `${e.instancePath || "/"}: ${e.message}${e.params ? " " + JSON.stringify(e.params) : ""}`);
  }
}

if (process.argv[2] === "--kinds") {
  process.stdout.write(JSON.stringify(Object.keys(MODELS)) + "\n");
} else {
  const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
  for await (const line of lines) {
    if (!line.trim()) continue;
    process.stdout.write(JSON.stringify(JSON.parse(line).map(errorsOf)) + "\n");
  }
}
