//go:build tools

// Package tools pins upstream's Helm chart module (its CRDs and RBAC templates), which the
// compatibility tests read; the build tag keeps it out of every build.
package tools

import _ "github.com/cisco-open/cluster-registry-controller/deploy/charts"
