#!/usr/bin/env bash
# Installs what a fresh machine needs to build and run effectively, then the npm dependencies.
# The Kafka client builds its bundled librdkafka from source here (no prebuilt binary can be downloaded): it links the
# system's OpenSSL, zlib, zstd, lz4 and SASL, so their headers must be present.
set -euo pipefail
cd "$(dirname "$0")/.."

# apt-get install, with sudo when not root, refreshing the package lists once if the first try fails.
apt_install() {
  local sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  echo "install: apt-get install $*"
  $sudo_cmd apt-get install -y -q "$@" >/dev/null \
    || { $sudo_cmd apt-get update -q >/dev/null && $sudo_cmd apt-get install -y -q "$@" >/dev/null; }
}

missing=()
for pkg in libssl-dev zlib1g-dev libzstd-dev liblz4-dev libsasl2-dev; do
  dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
done
if ((${#missing[@]})) && command -v apt-get >/dev/null; then
  apt_install "${missing[@]}"
fi

# The scenario report's browser test (and its screenshots) open reports in the system's Chromium, driven by
# playwright-core (a dev dependency, no browser download). CI installs it; elsewhere INSTALL_CHROMIUM=1 asks for it.
if { [ "${CI:-}" = true ] || [ "${INSTALL_CHROMIUM:-}" = 1 ]; } && ! command -v chromium >/dev/null \
  && command -v apt-get >/dev/null; then
  apt_install chromium
fi

export CKJS_LINKING=dynamic
# node-gyp cannot download Node's headers here; build against the local ones.
if [ -d /usr/include/node ]; then export npm_config_nodedir=/usr; fi

started=$SECONDS
npm install --no-audit --no-fund
echo "install: npm install took $((SECONDS - started)) s"
# npm skips install scripts not listed in package.json's allowScripts: make sure the native client was built.
node -e "require('@confluentinc/kafka-javascript')" \
  || { echo "install: the Kafka client's native module is missing (see docs/dev/development.md)" >&2; exit 1; }
