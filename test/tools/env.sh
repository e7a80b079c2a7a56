# Sourced before `npm test` and by build-tools.sh: names the Go-built tool cache and puts its bin dir on PATH.
CHORUS_TOOLS_DIR=${CHORUS_TOOLS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/chorus-tools}
export CHORUS_TOOLS_DIR
export CHORUS_TOOLS_BIN="$CHORUS_TOOLS_DIR/bin"
# Proto include path for grpcurl/ghz: the upstream ratelimit server registers no gRPC reflection.
CHORUS_PROTO_DIR=${CHORUS_PROTO_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../../proto" && pwd)}
export CHORUS_PROTO_DIR
export CHORUS_PROTO_INCLUDE="$CHORUS_PROTO_DIR:/usr/include"
case ":$PATH:" in
  *":$CHORUS_TOOLS_BIN:"*) ;;
  *) export PATH="$CHORUS_TOOLS_BIN:$PATH" ;;
esac
