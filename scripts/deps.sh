#!/bin/bash
# SPDX-License-Identifier: MIT
# Install the Debian packages that the build and the tests need, listed one
# per line in deps/*.list. Only what is missing is installed, `apt-get
# update` runs only when something is, and a second run does nothing.
set -euo pipefail
cd "$(dirname "$0")/.."

want=$(sed -e 's/#.*//' deps/*.list | tr -s ' \t' '\n' | sed '/^$/d' | sort -u)
missing=()
for p in $want; do
	st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
	[ "$st" = "install ok installed" ] || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
	echo "deps: all $(echo "$want" | wc -l) packages present"
	exit 0
fi
if [ "$(id -u)" != 0 ]; then
	echo "deps: missing packages and not root: ${missing[*]}" >&2
	exit 1
fi
echo "deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get -o DPkg::Lock::Timeout=600 update -qq
apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "${missing[@]}"
