#!/usr/bin/env bash
# Regenerates the TypeScript wire types in proto/gen from the .proto sources with protoc + ts-proto.
# Usage: bash proto/generate.sh [OUT_DIR]   (default proto/gen; the staleness test passes a temp dir)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/gen}
command -v protoc >/dev/null || { echo "protoc not found: apt-get install -y protobuf-compiler" >&2; exit 1; }
plugin=$here/../node_modules/.bin/protoc-gen-ts_proto
[ -x "$plugin" ] || { echo "ts-proto not installed: run npm ci" >&2; exit 1; }
rm -rf "$out" && mkdir -p "$out"
cd "$here"
mapfile -t sources < <(find . -name '*.proto' -not -path './gen/*' | sed 's#^\./##' | sort)
protoc -I . -I /usr/include \
  --plugin=protoc-gen-ts_proto="$plugin" \
  --ts_proto_out="$out" \
  --ts_proto_opt=outputServices=grpc-js,esModuleInterop=true,importSuffix=.js,env=node,forceLong=number,unrecognizedEnum=false,useOptionals=none,outputPartialMethods=false \
  "${sources[@]}"
