#!/usr/bin/env bash
# The main job, on local clusters: bring up a sandbox group and show it working.
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

step "starting 3 local clusters (one etcd, a kube-apiserver and kube-controller-manager each)"
cli sandbox up --clusters 3 --no-controllers --dir "$dir"

# shellcheck disable=SC1091
source "$dir/env.sh"
step "each cluster is a real Kubernetes API server; its identity is the kube-system namespace UID"
for c in cluster1 cluster2 cluster3; do
  uid=$(kubectl --context "$c" get namespace kube-system -o jsonpath='{.metadata.uid}')
  ver=$(kubectl --context "$c" version -o json | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).serverVersion.gitVersion))')
  printf '%-10s %-8s kube-system uid %s\n' "$c" "$ver" "$uid"
done

step "components and their memory"
cli sandbox status --dir "$dir"

step "done"
echo "The clusters keep running. Try:  source $dir/env.sh && kubectl --context cluster2 get ns"
echo "Stop them with:                  make demo-down"
