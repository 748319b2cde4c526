#!/usr/bin/env bash
# The main job, on local clusters: three clusters, each running the cluster-registry controller,
# joined into one group; then a peer failure seen and healed, and a rule previewed offline.
# usage: scripts/demo.sh DIR   (make demo uses .cache/demo; make demo-down stops it)
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:?usage: scripts/demo.sh DIR}
cli() { node bin/cluster-registry.js "$@"; }
step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

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

step "freezing cluster3's API server (SIGSTOP): the others notice within seconds"
apiserver_pid=$(node -e 'const s=require(process.argv[1]);console.log(s.clusters.find(c=>c.name==="cluster3").processes.find(p=>p.name.startsWith("kube-apiserver")).pid)' "$dir/sandbox.json")
kill -STOP "$apiserver_pid"
sleep 12
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
echo "Stop them with:                  make demo-down"
