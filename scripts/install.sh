#!/usr/bin/env bash
# Installs what a fresh machine needs to build and run effectively, then the npm dependencies.
# The Kafka client builds its bundled librdkafka from source here (no prebuilt binary can be downloaded): it links the
# system's OpenSSL, zlib, zstd, lz4 and SASL, so their headers must be present.
set -euo pipefail
cd "$(dirname "$0")/.."

missing=()
for pkg in libssl-dev zlib1g-dev libzstd-dev liblz4-dev libsasl2-dev; do
  dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
done
if ((${#missing[@]})) && command -v apt-get >/dev/null; then
  echo "install: apt-get install ${missing[*]}"
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd apt-get install -y -q "${missing[@]}" >/dev/null \
    || { $sudo_cmd apt-get update -q >/dev/null && $sudo_cmd apt-get install -y -q "${missing[@]}" >/dev/null; }
fi

export CKJS_LINKING=dynamic
# node-gyp cannot download Node's headers here; build against the local ones.
if [ -d /usr/include/node ]; then export npm_config_nodedir=/usr; fi

started=$SECONDS
npm install --no-audit --no-fund
echo "install: npm install took $((SECONDS - started)) s"
# npm skips install scripts not listed in package.json's allowScripts: make sure the native client was built.
node -e "require('@confluentinc/kafka-javascript')" \
  || { echo "install: the Kafka client's native module is missing (see docs/development.md)" >&2; exit 1; }
