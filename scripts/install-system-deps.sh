#!/usr/bin/env bash
# Installs the Debian packages Chorus needs to build, run and test (idempotent; needs root or sudo).
# RUNTIME: ffmpeg (audio encoders). BUILD: protobuf-compiler (proto generation check).
# TESTS: real servers started by the test setup (redis, memcached, postgresql, dnsmasq), ffmpeg/ffprobe,
# pocketsphinx for consent verification, sox and openssl for fixtures.
set -euo pipefail
packages=(protobuf-compiler redis-server redis-sentinel memcached postgresql ffmpeg espeak-ng
  pocketsphinx pocketsphinx-en-us sox dnsmasq-base openssl curl)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if ((${#missing[@]})); then
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo=sudo
  echo "installing Debian packages: ${missing[*]}"
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q "${missing[@]}"
fi
# The Debian redis/memcached/postgresql packages start system services; tests start their own on free ports.
