#!/usr/bin/env bash
# Builds the real Kubernetes binaries the sandbox and the tests run (kube-apiserver,
# kube-controller-manager, kubectl, etcd, helm) and the Go reference programs, from the
# pinned Go modules under tools/. Idempotent: each tool lands in .cache/tools/<name>-<version>-<hash>/
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
# a short hash of the module's files (pins and any Go source) so that any change rebuilds
module_hash() { (cd "$root/tools/$1" && cat go.mod go.sum $(ls ./*.go 2>/dev/null) | sha256sum | cut -c1-12); }

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

# build_tool NAME MODULE_DIR VERSION PACKAGE [LDFLAGS]
build_tool() {
  local name=$1 dir=$2 version=$3 pkg=$4 ldflags=${5:-"-s -w"}
  local out="$cache/$name-$version-$(module_hash "$dir")"
  mkdir -p "$bin"
  if [ -x "$out/$name" ]; then
    ln -sfn "$out/$name" "$bin/$name"
    echo "tools: $name $version already built"
    return 0
  fi
  echo "tools: building $name $version (module tools/$dir) ..."
  local start=$SECONDS log="$cache/$name.build.log"
  mkdir -p "$out.tmp"
  if ! (cd "$root/tools/$dir" && go build -ldflags "$ldflags" -o "$out.tmp/$name" "$pkg") >"$log" 2>&1; then
    echo "tools: FAILED to build $name $version from tools/$dir ($pkg); last lines of $log:" >&2
    tail -n 25 "$log" >&2
    rm -rf "$out.tmp"
    return 1
  fi
  rm -rf "$out" && mv "$out.tmp" "$out"
  ln -sfn "$out/$name" "$bin/$name"
  echo "tools: built $name $version in $((SECONDS - start))s"
}

build() {
  local k8s etcd helm
  case "$1" in
    kube-apiserver|kube-controller-manager|kubectl)
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
    *) echo "tools: unknown tool '$1'" >&2; return 2 ;;
  esac
}

tools=("$@")
[ ${#tools[@]} -gt 0 ] || tools=(etcd kube-apiserver kube-controller-manager kubectl helm oracle)
total=$SECONDS
for t in "${tools[@]}"; do
  build "$t"
done
echo "tools: all ready in $((SECONDS - total))s (binaries in .cache/tools/bin)"
