# Every target bootstraps what it needs on a fresh machine: npm ci when node_modules is stale,
# the Go-built Kubernetes tools when missing (tools/build.sh skips what is already cached).
SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
export PATH := $(CURDIR)/node_modules/.bin:$(PATH)
DEMO_DIR ?= $(CURDIR)/.cache/demo
TEST_FLAGS ?=

.PHONY: all deps tools browser node-host allocator build typecheck lint test test-unit test-integration chaos fuzz demo demo-down bench manifests clean

all: build

node_modules/.deps-stamp: package.json package-lock.json
	npm ci --no-audit --no-fund
	@touch $@

deps: node_modules/.deps-stamp

tools:
	tools/build.sh

# Installs those of the Debian packages $(1) that are missing (as root, or through sudo -n), saying why ($(2)).
define debian-install
missing=$$(for p in $(1); do dpkg-query -W -f='$${db:Status-Status}\n' $$p 2>/dev/null | grep -qx installed || echo $$p; done); \
if [ -n "$$missing" ]; then \
  echo "installing Debian's" $$missing "($(2))"; \
  sudo=; [ "$$(id -u)" = 0 ] || sudo="sudo -n"; \
  $$sudo apt-get update -qq && $$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-remove $$missing >/dev/null; \
fi
endef

# The dashboard's end-to-end test drives a real Chromium, Debian's (no test tool may download a
# browser here); CHROMIUM points the test at another build.
CHROMIUM ?= /usr/bin/chromium
export CHROMIUM
browser:
	@if [ ! -x "$(CHROMIUM)" ]; then \
	  echo "installing Debian's chromium for the dashboard test"; \
	  sudo=; [ "$$(id -u)" = 0 ] || sudo="sudo -n"; \
	  $$sudo apt-get update -qq && $$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	fi

# The real-node tests (test/node/) run a kubelet on containerd with the bridge CNI plugin, and build
# images with buildah from a Debian rootfs made by mmdebstrap: Debian's packages, installed where
# missing. They change iptables, cgroups and mounts, so they run as root (and undo it all).
NODE_PACKAGES := containerd runc containernetworking-plugins buildah mmdebstrap iptables conntrack gcc libc6-dev
node-host:
	@$(call debian-install,$(NODE_PACKAGES),for the real-node tests)

# The controller's image preloads jemalloc as its allocator; the tests, the fault and bad-input runs
# and the benchmarks run the sandbox's controllers on it too (src/testbed/group.ts), from Debian's
# package, installed where missing.
allocator:
	@$(call debian-install,libjemalloc2,the allocator the controller's image runs on)

build: deps
	npm run --silent build

typecheck: deps
	tsc --noEmit -p tsconfig.json

lint: deps
	eslint --max-warnings 0 .

# Unit tests are pure (no processes), the benchmark report's included; integration and end-to-end
# tests run real clusters.
test-unit: deps
	node --test --test-reporter=spec $(TEST_FLAGS) 'src/**/*.test.ts' 'bench/**/*.test.ts'

test-integration: deps tools browser node-host allocator build
	node --test --test-reporter=spec --test-concurrency=1 --test-timeout=600000 $(TEST_FLAGS) 'test/**/*.test.ts'

test: deps tools browser node-host allocator build typecheck lint
	node --test --test-reporter=spec --test-concurrency=2 --test-timeout=600000 $(TEST_FLAGS) 'src/**/*.test.ts' 'bench/**/*.test.ts' 'test/**/*.test.ts'

# The long randomised fault run (test/chaos/): CHAOS_FAULTS faults (default 500) from seed
# CHAOS_SEED (a fresh one, printed, when unset); figures in .cache/chaos/. Fails on any violation.
chaos: deps tools allocator
	node test/chaos/run.ts

# The long bad-input run (test/fuzz/): FUZZ_CASES generated rules, features, Clusters with their
# kubeconfig Secrets and hostile-peer objects (default 10000, batches of FUZZ_BATCH) from seed
# FUZZ_SEED (a fresh one, printed, when unset); figures in .cache/fuzz/. Fails on any violation.
fuzz: deps tools allocator
	node test/fuzz/run.ts

demo: deps tools build
	./scripts/demo.sh "$(DEMO_DIR)"

demo-down: build
	node bin/cluster-registry.js sandbox down --dir "$(DEMO_DIR)"

bench: deps tools allocator
	node bench/run.ts

# The plain manifests under deploy/ are rendered from the Helm chart (a test checks they are current).
manifests: deps tools
	node scripts/manifests.ts

clean:
	rm -rf dist
