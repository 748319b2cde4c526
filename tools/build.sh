#!/usr/bin/env bash
# Builds the real Kubernetes binaries the sandbox and the tests run (kube-apiserver,
# kube-controller-manager, kubectl, etcd, helm; kubelet, kube-scheduler and kube-proxy for the
# real-node cluster), the Go reference programs, and upstream's
# controller, controller-gen and manifests for the compatibility tests, SIG-Multicluster's CRDs,
# Istio's CRDs, from the pinned Go modules
# under tools/. Idempotent: each tool lands in .cache/tools/<name>-<version>-<hash>/
# and is skipped when already there, so only a changed pin rebuilds.
#
# usage: tools/build.sh [tool ...]      (default: every tool)
#        tools/build.sh --print-bin-dir  (where the binaries live; builds nothing)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cache="$root/.cache/tools"
bin="$cache/bin"
export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS="-mod=readonly -trimpath -buildvcs=false"

if [ "${1:-}" = "--print-bin-dir" ]; then echo "$bin"; exit 0; fi

if ! command -v go >/dev/null 2>&1; then
  echo "tools: 'go' is not on PATH; the Kubernetes binaries are built from Go modules (Go >= 1.26 needed)" >&2
  exit 1
fi

# module version of $2 required by tools/$1/go.mod
required_version() { (cd "$root/tools/$1" && go list -m -f '{{.Version}}' "$2"); }
# where the module $2 required by tools/$1/go.mod is unpacked (downloaded first if needed)
module_dir() { (cd "$root/tools/$1" && go mod download "$2" && go list -m -f '{{.Dir}}' "$2"); }
# a short hash of the modules' files (pins and any Go source) so that any change rebuilds
module_hash() {
  local dir
  for dir in "$@"; do (cd "$root/tools/$dir" && cat go.mod go.sum $(ls ./*.go 2>/dev/null)); done | sha256sum | cut -c1-12
}

k8s_ldflags() {
  local v=$1 minor
  minor=$(echo "$v" | cut -d. -f2)
  echo "-s -w" \
    "-X k8s.io/component-base/version.gitVersion=$v -X k8s.io/component-base/version.gitMajor=1" \
    "-X k8s.io/component-base/version.gitMinor=$minor -X k8s.io/component-base/version.gitTreeState=clean" \
    "-X k8s.io/component-base/version.buildDate=1970-01-01T00:00:00Z" \
    "-X k8s.io/client-go/pkg/version.gitVersion=$v -X k8s.io/client-go/pkg/version.gitMajor=1" \
    "-X k8s.io/client-go/pkg/version.gitMinor=$minor"
}

# cached NAME VERSION "MODULE_DIR..." STEP [ARG...]: runs STEP ARG... OUT_DIR once per pin of
# those modules; STEP puts NAME (a binary or a directory) into OUT_DIR, and bin/NAME links to it.
cached() {
  local name=$1 version=$2 dirs=$3
  shift 3
  local out
  out="$cache/$name-$version-$(module_hash $dirs)"
  mkdir -p "$bin"
  if [ -e "$out/$name" ]; then
    ln -sfn "$out/$name" "$bin/$name"
    echo "tools: $name $version already built"
    return 0
  fi
  echo "tools: building $name $version (tools/${dirs// /, tools/}) ..."
  local start=$SECONDS log="$cache/$name.build.log"
  rm -rf "$out.tmp" && mkdir -p "$out.tmp"
  if ! "$@" "$out.tmp" >"$log" 2>&1; then
    echo "tools: FAILED to build $name $version (tools/${dirs// /, tools/}); last lines of $log:" >&2
    tail -n 25 "$log" >&2
    rm -rf "$out.tmp"
    return 1
  fi
  rm -rf "$out" && mv "$out.tmp" "$out"
  ln -sfn "$out/$name" "$bin/$name"
  echo "tools: built $name $version in $((SECONDS - start))s"
}

# go_build MODULE_DIR PACKAGE LDFLAGS NAME OUT_DIR
go_build() { (cd "$root/tools/$1" && go build -ldflags "$3" -o "$5/$4" "$2"); }

# build_tool NAME MODULE_DIR VERSION PACKAGE [LDFLAGS]
build_tool() {
  cached "$1" "$3" "$2" go_build "$2" "$4" "${5:-"-s -w"}" "$1"
}

upstream_module=github.com/cisco-open/cluster-registry-controller

# upstream_manifests OUT_DIR: upstream's CRDs generated from its api module as its Makefile does
# (its controller-gen, its options), and its Helm chart, whose RBAC templates are the only
# statement of the permissions upstream needs (its code has no RBAC markers).
upstream_manifests() {
  local dest=$1/upstream-manifests api charts work status=0
  api=$(module_dir upstream "$upstream_module/api") || return 1
  charts=$(module_dir upstream "$upstream_module/deploy/charts") || return 1
  # controller-gen loads packages where it runs, and the module cache is read-only: work on a copy.
  work=$(mktemp -d) || return 1
  cp -r "$api" "$work/api" && chmod -R u+w "$work/api" &&
    (cd "$work/api/v1alpha1" && "$bin/controller-gen" "crd:trivialVersions=true,preserveUnknownFields=false" \
      paths=./... output:crd:artifacts:config="$dest/crds") || status=1
  rm -rf "$work"
  [ $status -eq 0 ] && cp -r "$charts/cluster-registry" "$dest/chart" && chmod -R u+w "$dest/chart"
}

# sig_crds OUT_DIR: SIG-Multicluster's CRDs as its modules ship them (About API ClusterProperty,
# cluster-inventory ClusterProfile), for the tests of what we publish through them.
sig_crds() {
  local about inventory
  about=$(module_dir sig-multicluster sigs.k8s.io/about-api) || return 1
  inventory=$(module_dir sig-multicluster sigs.k8s.io/cluster-inventory-api) || return 1
  mkdir -p "$1/sig-crds" &&
    cp "$about/config/crd/about.k8s.io_clusterproperties.yaml" "$inventory/config/crd/bases/multicluster.x-k8s.io_clusterprofiles.yaml" "$1/sig-crds/" &&
    chmod -R u+w "$1/sig-crds"
}

# istio_crds OUT_DIR: Istio's CRDs as its base chart ships them (all its kinds in one file), for the
# tests of the cookbook's mesh recipes on the real schemas. Only that file is kept of the module.
istio_crds() {
  local istio
  istio=$(module_dir istio istio.io/istio) || return 1
  mkdir -p "$1/istio-crds" &&
    cp "$istio/manifests/charts/base/files/crd-all.gen.yaml" "$1/istio-crds/" &&
    chmod -R u+w "$1/istio-crds"
}

build() {
  local k8s etcd helm upstream
  case "$1" in
    kube-apiserver|kube-controller-manager|kubectl|kubelet|kube-scheduler|kube-proxy)
      k8s=$(required_version k8s k8s.io/kubernetes)
      build_tool "$1" k8s "$k8s" "k8s.io/kubernetes/cmd/$1" "$(k8s_ldflags "$k8s")" ;;
    etcd)
      etcd=$(required_version etcd go.etcd.io/etcd/server/v3)
      build_tool etcd etcd "$etcd" go.etcd.io/etcd/server/v3 ;;
    helm)
      helm=$(required_version helm helm.sh/helm/v3)
      build_tool helm helm "$helm" helm.sh/helm/v3/cmd/helm "-s -w -X helm.sh/helm/v3/internal/version.version=$helm" ;;
    oracle)
      build_tool oracle oracle v1 cluster-registry.local/tools/oracle ;;
    upstream-controller)
      upstream=$(required_version upstream "$upstream_module")
      build_tool upstream-controller upstream "$upstream" "$upstream_module/cmd/manager" "-s -w -X main.version=$upstream" ;;
    controller-gen)
      build_tool controller-gen controller-gen "$(required_version controller-gen sigs.k8s.io/controller-tools)" sigs.k8s.io/controller-tools/cmd/controller-gen ;;
    upstream-manifests)
      build controller-gen
      cached upstream-manifests "$(required_version upstream "$upstream_module/api")" "upstream controller-gen" upstream_manifests ;;
    sig-crds)
      cached sig-crds "$(required_version sig-multicluster sigs.k8s.io/cluster-inventory-api)" sig-multicluster sig_crds ;;
    istio-crds)
      cached istio-crds "$(required_version istio istio.io/istio)" istio istio_crds ;;
    *) echo "tools: unknown tool '$1'" >&2; return 2 ;;
  esac
}

tools=("$@")
[ ${#tools[@]} -gt 0 ] || tools=(etcd kube-apiserver kube-controller-manager kubectl kubelet kube-scheduler kube-proxy helm oracle upstream-controller controller-gen upstream-manifests sig-crds istio-crds)
total=$SECONDS
for t in "${tools[@]}"; do
  build "$t"
done
echo "tools: all ready in $((SECONDS - total))s (binaries in .cache/tools/bin)"
