#!/usr/bin/env bash
# The schemas of the custom resources in deploy/k8s, from package registries, into .data/k8s
# (once; `make k8s-schemas`, which `make test` runs):
# - Strimzi's CRDs (Kafka, KafkaNodePool, KafkaTopic, KafkaUser): its API model and CRD generator
#   from Maven Central (pom.xml), run with the machine's JDK -> .data/k8s/crds/*.json;
# - prometheus-operator's (ServiceMonitor, PodMonitor, PrometheusRule): the compiled validators of
#   @kubernetes-models/prometheus-operator from the npm registry (package-lock.json) ->
#   .data/k8s/node_modules, run by validate.mjs with node.
# Env: JAVA (java), MVN (mvn), NPM (npm).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../../.." && pwd)"
OUT="$ROOT/.data/k8s"
JAVA="${JAVA:-java}"
MVN="${MVN:-mvn}"
NPM="${NPM:-npm}"
VERSION="$(sed -n 's:.*<strimzi.version>\(.*\)</strimzi.version>.*:\1:p' "$HERE/pom.xml")"

say() { printf 'k8s-schemas: %s\n' "$*"; }
die() { printf 'k8s-schemas: error: %s\n' "$*" >&2; exit 1; }
mkdir -p "$OUT"

STAMP="$OUT/crds/.strimzi-$VERSION"
if [[ ! -f "$STAMP" ]]; then
  command -v "$MVN" >/dev/null || die "mvn not found; it is needed once to fetch Strimzi's CRD generator"
  command -v "$JAVA" >/dev/null || die "java not found; a JDK 17 runs Strimzi's CRD generator"
  say "resolving Strimzi $VERSION's API and CRD generator from Maven Central (first time only)..."
  LIBS="$OUT/strimzi-libs"
  rm -rf "$LIBS" "$OUT/crds"
  args=(-B -q -Dstyle.color=never -f "$HERE/pom.xml" "-Dlibs.dir=$LIBS" package)
  "$MVN" -o "${args[@]}" >"$OUT/mvn.log" 2>&1 || "$MVN" "${args[@]}" >"$OUT/mvn.log" 2>&1 \
    || { cat "$OUT/mvn.log" >&2; die "mvn could not resolve io.strimzi:crd-generator:$VERSION (log: $OUT/mvn.log)"; }
  mkdir -p "$OUT/crds"
  model=io.strimzi.api.kafka.model
  "$JAVA" -cp "$LIBS/*" io.strimzi.crdgenerator.CrdGenerator --crd-api-version v1 \
    "$model.kafka.Kafka=$OUT/crds/kafka.json" \
    "$model.nodepool.KafkaNodePool=$OUT/crds/kafkanodepool.json" \
    "$model.topic.KafkaTopic=$OUT/crds/kafkatopic.json" \
    "$model.user.KafkaUser=$OUT/crds/kafkauser.json" >"$OUT/crd-generator.log" 2>&1 \
    || { cat "$OUT/crd-generator.log" >&2; die "Strimzi's CRD generator failed (log: $OUT/crd-generator.log)"; }
  touch "$STAMP"
  say "Strimzi CRDs in $OUT/crds"
fi

LOCK_STAMP="$OUT/node_modules/.lock-$(sha256sum "$HERE/package-lock.json" | cut -c1-16)"
if [[ ! -f "$LOCK_STAMP" ]]; then
  command -v "$NPM" >/dev/null || die "npm not found; it is needed once to fetch prometheus-operator's schemas"
  say "installing @kubernetes-models/prometheus-operator from the npm registry (first time only)..."
  cp "$HERE/package.json" "$HERE/package-lock.json" "$OUT/"
  (cd "$OUT" && "$NPM" ci --no-audit --no-fund --loglevel=error >"$OUT/npm.log" 2>&1) \
    || { cat "$OUT/npm.log" >&2; die "npm could not install the schemas (log: $OUT/npm.log)"; }
  cp "$HERE/validate.mjs" "$OUT/validate.mjs"
  touch "$LOCK_STAMP"
  say "prometheus-operator schemas in $OUT/node_modules"
fi
cp "$HERE/validate.mjs" "$OUT/validate.mjs"
