// Istio's CRDs, as its base chart ships them (manifests/charts/base/files/crd-all.gen.yaml), for
// the tests of the cookbook's mesh recipes on Istio's real schemas. Istio tags no Go module
// versions: this is a pseudo-version of its main branch.
module cluster-registry.local/tools/istio

go 1.26

require istio.io/istio v0.0.0-20260827124520-eed52ebb66ad
