#!/usr/bin/env bash
# Builds the pinned Go test tools from the Go module proxy into a version-keyed cache outside the repository.
#
# Usage: build-tools.sh [tool...]   (default: all of them; names as in TOOLS below)
# Layout: $CHORUS_TOOLS_DIR/<tool>-<version>/<binary>, symlinked from $CHORUS_TOOLS_BIN/<binary>;
#         Go's own caches live in $CHORUS_TOOLS_DIR/go so CI can cache the whole directory.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=env.sh
source "$HERE/env.sh"

# Pinned versions. k8s: the newest v1.34.x the module proxy serves (v1.34.5+ are not mirrored).
K8S_VERSION=1.34.4
# etcd: the go.etcd.io/etcd/server/v3 version k8s.io/kubernetes@v$K8S_VERSION requires (checked below).
ETCD_VERSION=3.6.4
HELM_VERSION=3.21.4
KUBECONFORM_VERSION=0.7.0
GRPCURL_VERSION=1.9.3
GHZ_VERSION=0.121.0
# envoyproxy/ratelimit has no usable tags; pinned by pseudo-version. The brief's f2fb15770f7f (2026-07-05) is not
# served by the module proxy (403), so this is the newest commit the proxy has.
RATELIMIT_VERSION=v1.4.1-0.20260122083618-3fb702589d36

TOOLS=(ratelimit grpcurl ghz etcd helm kubeconform kube-apiserver)

K8S_MINOR=${K8S_VERSION#1.}
K8S_MINOR=${K8S_MINOR%%.*}
K8S_PATCH=${K8S_VERSION##*.}

export GOPATH="$CHORUS_TOOLS_DIR/go/path"
export GOCACHE="$CHORUS_TOOLS_DIR/go/cache"
export GOMODCACHE="$CHORUS_TOOLS_DIR/go/modcache"
# -modcacherw keeps the cache deletable; GOTOOLCHAIN=local fails loudly instead of fetching another Go.
export GOFLAGS="-modcacherw -buildvcs=false"
export GOTOOLCHAIN=local
export CGO_ENABLED=0
mkdir -p "$CHORUS_TOOLS_BIN" "$GOPATH" "$GOCACHE" "$GOMODCACHE" "$CHORUS_TOOLS_DIR/work"

command -v go >/dev/null || { echo "build-tools: 'go' is not on PATH (need Go >= 1.26)" >&2; exit 1; }

log() { printf '[build-tools %s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }

# Fresh scratch module for one tool; echoes its path.
scratch_module() {
  local dir="$CHORUS_TOOLS_DIR/work/$1"
  rm -rf "$dir"
  mkdir -p "$dir"
  (cd "$dir" && go mod init "local/chorus-tools/$1" >/dev/null 2>&1)
  echo "$dir"
}

# Links every binary of a finished versioned dir into the bin dir.
link_bins() {
  local vdir=$1
  shift
  local name
  for name in "$@"; do
    ln -sfn "../$(basename "$vdir")/$name" "$CHORUS_TOOLS_BIN/$name"
  done
}

# True when all named binaries of a versioned dir exist and the bin links point at it.
is_built() {
  local vdir=$1
  shift
  local name
  for name in "$@"; do
    [ -x "$vdir/$name" ] || return 1
    [ "$(readlink "$CHORUS_TOOLS_BIN/$name" 2>/dev/null)" = "../$(basename "$vdir")/$name" ] || return 1
  done
}

# Builds into <vdir>.tmp and renames, so an interrupted build never looks finished.
# Usage: build_tool <vdir> <builder-function> <binary...>
build_tool() {
  local vdir=$1 builder=$2
  shift 2
  if [ -x "$vdir/$1" ] && [ "$(ls "$vdir" | wc -l)" -ge "$#" ]; then
    link_bins "$vdir" "$@"
    return 0
  fi
  local tmp="$vdir.tmp"
  rm -rf "$tmp"
  mkdir -p "$tmp"
  log "building $(basename "$vdir") ..."
  local start=$SECONDS
  # The subshell keeps `set -e` active inside the builder (bash ignores it in a tested context).
  local rc=0
  set +e
  (
    set -e
    "$builder" "$tmp"
  )
  rc=$?
  set -e
  if [ "$rc" -ne 0 ]; then
    log "FAILED: $(basename "$vdir") (exit $rc)"
    return 1
  fi
  local name
  for name in "$@"; do
    [ -x "$tmp/$name" ] || { log "FAILED: $(basename "$vdir") produced no $name"; return 1; }
  done
  rm -rf "$vdir"
  mv "$tmp" "$vdir"
  link_bins "$vdir" "$@"
  log "built $(basename "$vdir") in $((SECONDS - start))s"
}

k8s_gomod() {
  go list -m -json "k8s.io/kubernetes@v$K8S_VERSION" | sed -nE 's/^[[:space:]]*"GoMod": "(.*)",?$/\1/p'
}

build_kube_apiserver() {
  local out=$1 mod gomod m
  mod=$(scratch_module "kube-apiserver-$K8S_VERSION")
  (
    cd "$mod"
    gomod=$(k8s_gomod)
    [ -f "$gomod" ] || { echo "no go.mod for k8s.io/kubernetes@v$K8S_VERSION" >&2; exit 1; }
    local count=0
    # Every staging module is required at v0.0.0 and replaced by ./staging/...: point each at its published tag.
    for m in $(sed -nE 's#^[[:space:]]*(k8s\.io/[A-Za-z0-9._-]+)[[:space:]]+=>[[:space:]]+\./staging/.*#\1#p' "$gomod"); do
      go mod edit -replace="$m=$m@v0.$K8S_MINOR.$K8S_PATCH"
      count=$((count + 1))
    done
    [ "$count" -gt 20 ] || { echo "found only $count staging replaces in $gomod" >&2; exit 1; }
    echo "kube-apiserver: $count staging modules replaced with v0.$K8S_MINOR.$K8S_PATCH" >&2
    # Keep k8s's own runtime defaults (e.g. `godebug default=go1.24`).
    sed -nE 's/^godebug[[:space:]]+(.*)$/\1/p' "$gomod" | while read -r kv; do go mod edit -godebug="$kv"; done
    go get "k8s.io/kubernetes/cmd/kube-apiserver@v$K8S_VERSION"
    go build -trimpath -ldflags "-s -w \
      -X k8s.io/component-base/version.gitVersion=v$K8S_VERSION \
      -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$K8S_MINOR \
      -X k8s.io/component-base/version.gitTreeState=clean" \
      -o "$out/kube-apiserver" k8s.io/kubernetes/cmd/kube-apiserver
  )
}

build_etcd() {
  local out=$1 mod gomod want
  mod=$(scratch_module "etcd-$ETCD_VERSION")
  (
    cd "$mod"
    gomod=$(k8s_gomod)
    want=$(sed -nE 's#^[[:space:]]*go\.etcd\.io/etcd/server/v3[[:space:]]+v([0-9.]+).*#\1#p' "$gomod" | head -1)
    if [ "$want" != "$ETCD_VERSION" ]; then
      echo "etcd pin v$ETCD_VERSION differs from k8s v$K8S_VERSION's go.mod (v$want): update ETCD_VERSION" >&2
      exit 1
    fi
    go get "go.etcd.io/etcd/server/v3@v$ETCD_VERSION" # the module root is the main package
    go build -trimpath -ldflags "-s -w" -o "$out/etcd" go.etcd.io/etcd/server/v3
  )
}

build_helm() {
  local out=$1
  # Without these, a go-built helm renders .Capabilities.KubeVersion as v1.20.
  GOBIN="$out" go install -trimpath -ldflags "-s -w \
    -X helm.sh/helm/v3/internal/version.version=v$HELM_VERSION \
    -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMajor=1 -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMinor=$K8S_MINOR \
    -X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMajor=1 -X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMinor=$K8S_MINOR" \
    "helm.sh/helm/v3/cmd/helm@v$HELM_VERSION"
}

build_kubeconform() {
  GOBIN="$1" go install -trimpath -ldflags "-s -w -X main.version=v$KUBECONFORM_VERSION" \
    "github.com/yannh/kubeconform/cmd/kubeconform@v$KUBECONFORM_VERSION"
}

build_grpcurl() {
  GOBIN="$1" go install -trimpath -ldflags "-s -w -X main.version=v$GRPCURL_VERSION" \
    "github.com/fullstorydev/grpcurl/cmd/grpcurl@v$GRPCURL_VERSION"
}

build_ghz() {
  GOBIN="$1" go install -trimpath -ldflags "-s -w -X main.version=v$GHZ_VERSION" \
    "github.com/bojand/ghz/cmd/ghz@v$GHZ_VERSION"
}

build_ratelimit() {
  local out=$1 mod
  mod=$(scratch_module "ratelimit-$RATELIMIT_VERSION")
  (
    cd "$mod"
    # Getting the command packages (not the bare module) records go.sum entries for their dependencies.
    go get "github.com/envoyproxy/ratelimit/src/service_cmd@$RATELIMIT_VERSION" \
      "github.com/envoyproxy/ratelimit/src/client_cmd@$RATELIMIT_VERSION"
    go build -trimpath -ldflags "-s -w" -o "$out/ratelimit" github.com/envoyproxy/ratelimit/src/service_cmd
    go build -trimpath -ldflags "-s -w" -o "$out/ratelimit-client" github.com/envoyproxy/ratelimit/src/client_cmd
    echo "$RATELIMIT_VERSION" >"$out/VERSION"
  )
}

tool_vdir() {
  case $1 in
    kube-apiserver) echo "$CHORUS_TOOLS_DIR/kube-apiserver-v$K8S_VERSION" ;;
    etcd) echo "$CHORUS_TOOLS_DIR/etcd-v$ETCD_VERSION" ;;
    helm) echo "$CHORUS_TOOLS_DIR/helm-v$HELM_VERSION-k8s1.$K8S_MINOR" ;;
    kubeconform) echo "$CHORUS_TOOLS_DIR/kubeconform-v$KUBECONFORM_VERSION" ;;
    grpcurl) echo "$CHORUS_TOOLS_DIR/grpcurl-v$GRPCURL_VERSION" ;;
    ghz) echo "$CHORUS_TOOLS_DIR/ghz-v$GHZ_VERSION" ;;
    ratelimit) echo "$CHORUS_TOOLS_DIR/ratelimit-$RATELIMIT_VERSION" ;;
    *) return 1 ;;
  esac
}

tool_bins() {
  case $1 in
    ratelimit) echo "ratelimit ratelimit-client" ;;
    *) echo "$1" ;;
  esac
}

tool_version() {
  local bin="$CHORUS_TOOLS_BIN/$1"
  case $1 in
    kube-apiserver) "$bin" --version 2>&1 | head -1 ;;
    etcd) "$bin" --version 2>&1 | head -1 ;;
    helm) "$bin" version --short 2>&1 | head -1 ;;
    kubeconform) "$bin" -v 2>&1 | head -1 ;;
    grpcurl) "$bin" -version 2>&1 | head -1 ;;
    ghz) "$bin" --version 2>&1 | head -1 ;;
    ratelimit) echo "envoyproxy/ratelimit $(cat "$(tool_vdir ratelimit)/VERSION")" ;;
  esac
}

selected=("$@")
[ ${#selected[@]} -gt 0 ] || selected=("${TOOLS[@]}")
for tool in "${selected[@]}"; do
  tool_vdir "$tool" >/dev/null || { echo "build-tools: unknown tool '$tool' (known: ${TOOLS[*]})" >&2; exit 2; }
done

failed=()
for tool in "${selected[@]}"; do
  vdir=$(tool_vdir "$tool")
  # shellcheck disable=SC2046
  if is_built "$vdir" $(tool_bins "$tool"); then
    continue
  fi
  # shellcheck disable=SC2046
  build_tool "$vdir" "build_${tool//-/_}" $(tool_bins "$tool") || failed+=("$tool")
done

echo "Chorus test tools in $CHORUS_TOOLS_BIN:"
for tool in "${selected[@]}"; do
  for name in $(tool_bins "$tool"); do
    if [ -x "$CHORUS_TOOLS_BIN/$name" ]; then
      printf '  %-16s %s  (%s)\n' "$name" "$(readlink -f "$CHORUS_TOOLS_BIN/$name")" "$(tool_version "$tool")"
    else
      printf '  %-16s MISSING\n' "$name"
    fi
  done
done
echo "  proto include:   $CHORUS_PROTO_INCLUDE"

if [ ${#failed[@]} -gt 0 ]; then
  echo "build-tools: FAILED to build: ${failed[*]}" >&2
  exit 1
fi
