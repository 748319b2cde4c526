// The SIG-Multicluster APIs the inventory test installs: their CRDs come from these modules, as
// the SIG publishes them. The About API has no tags; this is the commit the OCM cluster manager
// pins, and the checksum database does not list it (go.sum pins it instead).
module cluster-registry.local/tools/sig-multicluster

go 1.26

require (
	sigs.k8s.io/about-api v0.0.0-20250131010323-518069c31c03
	sigs.k8s.io/cluster-inventory-api v0.1.3
)
