# Chorus: build, run and test. `make run` and `make test` work on a fresh Debian 12 machine as root.
SHELL := /bin/bash
.DEFAULT_GOAL := help
NPM_STAMP := node_modules/.package-lock.json

.PHONY: help deps system-deps node-deps tools build run run-speech test test-unit lint typecheck proto clean

help: ## list targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-14s %s\n", $$1, $$2}'

system-deps: ## Debian packages (protoc, redis, memcached, postgresql, ffmpeg, espeak-ng, pocketsphinx, ...)
	bash scripts/install-system-deps.sh

$(NPM_STAMP): package.json package-lock.json
	npm ci --no-audit --no-fund
	@touch $(NPM_STAMP)

node-deps: $(NPM_STAMP) ## npm packages from the lock file

deps: system-deps node-deps ## everything the programs need

tools: ## Go-built test tools (kube-apiserver, etcd, helm, grpcurl, ghz, upstream ratelimit), cached outside the repo
	bash test/tools/build-tools.sh

build: node-deps ## compile TypeScript to dist/
	npm run build

run: deps build ## run the rate limit sidecar on embedded defaults (memory backend, example config)
	USE_STATSD=false LOG_LEVEL=info RUNTIME_ROOT=$(CURDIR)/examples/runtime RUNTIME_SUBDIRECTORY=ratelimit \
	  RUNTIME_WATCH_ROOT=false node dist/sidecar/main.js

run-speech: deps build ## run the speech gateway on embedded defaults (PGlite in ./data, in-process engine)
	node dist/speech/main.js

typecheck: node-deps
	npm run typecheck

lint: node-deps ## eslint + prettier check
	npm run lint

proto: node-deps ## regenerate proto/gen from proto/*.proto
	npm run proto

test: deps tools ## install what the tests need, then lint, typecheck and run every test
	npm run lint
	npm run typecheck
	source test/tools/env.sh && npm test

test-unit: node-deps ## fast tests only (no servers)
	npm run test:unit

clean:
	rm -rf dist
