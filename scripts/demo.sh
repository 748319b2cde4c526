#!/usr/bin/env bash
# The main job, on local clusters: three clusters, each running the cluster-registry controller,
# joined into one group; a Secret synced through a ResourceSyncRule, followed through an update and
# its deletion; a custom resource synced with its status and renamed by a template; a peer failure
# seen and healed; and a rule previewed offline.
# usage: scripts/demo.sh DIR   (make demo uses .cache/demo; make demo-down stops it)
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:?usage: scripts/demo.sh DIR}
cli() { node bin/cluster-registry.js "$@"; }
# Bold headings on a terminal only.
if [ -t 1 ]; then step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }; else step() { printf '\n== %s\n' "$*"; }; fi
# Polls a condition for up to a minute (the demo shows what happens, so it waits on the thing itself).
wait_for() {
  local what=$1
  shift
  for _ in $(seq 1 120); do
    if "$@" >/dev/null 2>&1; then return 0; fi
    sleep 0.5
  done
  echo "timed out waiting for $what" >&2
  return 1
}
secret_value() { kubectl --context "$1" -n cluster-registry get secret test-secret -o jsonpath='{.data.greeting}' | base64 -d; }
has_value() { [ "$(secret_value "$1")" = "$2" ]; }
gone() { ! kubectl --context "$1" -n cluster-registry get secret test-secret; }

if [ -f "$dir/sandbox.json" ]; then
  step "stopping the previous demo sandbox in $dir"
  cli sandbox down --dir "$dir"
fi

step "three local clusters, each running the cluster-registry controller, joined into one group"
cli sandbox up --clusters 3 --join --dir "$dir"

# shellcheck disable=SC1091
source "$dir/env.sh"
step "the group as cluster1 sees it (cluster-registry status)"
cli status --kubeconfig "$dir/cluster1.kubeconfig"

step "the same registry through kubectl on cluster2 (the CRDs' printer columns)"
kubectl --context cluster2 get clusters.clusterregistry.k8s.cisco.com -o wide

step "syncing a Secret: made on cluster3, a ResourceSyncRule applied on cluster1 (rules reach every member)"
kubectl --context cluster3 -n cluster-registry create secret generic test-secret --from-literal=greeting=hello
kubectl --context cluster1 apply -f examples/sync/test-secret-rule.yaml
for c in cluster1 cluster2; do wait_for "the copy on $c" has_value "$c" hello; done
kubectl --context cluster2 -n cluster-registry get secret test-secret \
  -o custom-columns='NAME:.metadata.name,OWNER CLUSTER ID:.metadata.annotations.cluster-registry\.k8s\.cisco\.com/resource-owner-cluster-id'
echo "cluster3's ID: $(kubectl --context cluster3 get ns kube-system -o jsonpath='{.metadata.uid}')"

step "changing it on cluster3: every copy follows"
kubectl --context cluster3 -n cluster-registry patch secret test-secret --type=merge -p '{"stringData":{"greeting":"hello again"}}'
for c in cluster1 cluster2; do wait_for "the update on $c" has_value "$c" "hello again"; echo "$c: $(secret_value "$c")"; done

step "deleting it on cluster3: every copy goes"
kubectl --context cluster3 -n cluster-registry delete secret test-secret
for c in cluster1 cluster2; do wait_for "the copy on $c to go" gone "$c"; echo "$c: no test-secret"; done
kubectl --context cluster1 get rsr test-secret-sink -o jsonpath='{range .status.clusters[*]}{.name}{": "}{.state}{", matched "}{.matched}{"\n"}{end}'

step "syncing a custom resource with its status, each copy renamed by a template (examples/sync/widget-rule.yaml)"
for c in cluster1 cluster2 cluster3; do kubectl --context "$c" apply -f examples/sync/widgets.yaml >/dev/null; done
for c in cluster1 cluster2 cluster3; do kubectl --context "$c" wait --for=condition=Established --timeout=60s crd/widgets.example.com >/dev/null; done
kubectl --context cluster1 apply -f examples/sync/widget-rule.yaml
kubectl --context cluster2 -n default apply -f - <<'YAML'
apiVersion: example.com/v1
kind: Widget
metadata: {name: gear}
spec: {size: 3}
YAML
kubectl --context cluster2 -n default patch widget gear --subresource=status --type=merge -p '{"status":{"phase":"Spinning"}}'
widget_phase() { [ "$(kubectl --context "$1" -n default get widget gear-from-cluster2 -o jsonpath='{.status.phase}')" = Spinning ]; }
for c in cluster1 cluster3; do wait_for "the renamed Widget with its status on $c" widget_phase "$c"; done
for c in cluster1 cluster3; do echo "--- $c"; kubectl --context "$c" -n default get widgets; done

step "freezing cluster3's API server (SIGSTOP): the others notice within seconds"
apiserver_pid=$(node -e 'const s=require(process.argv[1]);console.log(s.clusters.find(c=>c.name==="cluster3").processes.find(p=>p.name.startsWith("kube-apiserver")).pid)' "$dir/sandbox.json")
kill -STOP "$apiserver_pid"
# shellcheck disable=SC2317
cluster3_down() { cli status --kubeconfig "$dir/cluster1.kubeconfig" -o json | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>process.exit(JSON.parse(s).some(r=>r.name==="cluster3"&&r.state!=="Ready")?0:1))'; }
wait_for "cluster1 to see cluster3 down" cluster3_down
cli status --kubeconfig "$dir/cluster1.kubeconfig"

step "thawing it (SIGCONT): Ready again"
kill -CONT "$apiserver_pid"
for _ in $(seq 1 30); do
  cli status --kubeconfig "$dir/cluster1.kubeconfig" -o json | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>process.exit(JSON.parse(s).every(r=>r.state==="Ready")?0:1))' && break
  sleep 1
done
cli status --kubeconfig "$dir/cluster1.kubeconfig"

step "previewing a ResourceSyncRule offline (cluster-registry rule render, examples/rule-render)"
cli rule render --rule examples/rule-render/rule.yaml --object examples/rule-render/service.yaml \
  --cluster examples/rule-render/cluster.yaml --local-cluster examples/rule-render/local-cluster.yaml

step "components and their memory"
cli sandbox status --dir "$dir"

step "done"
echo "The clusters keep running. Try:  source $dir/env.sh && kubectl --context cluster2 get clusters"
echo "Watch the group live in a browser: npx cluster-registry dashboard --kubeconfig $dir/cluster1.kubeconfig"
echo "Stop them with:                  make demo-down"
