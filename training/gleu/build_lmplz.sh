#!/usr/bin/env bash
# Build KenLM's estimation tools (lmplz, build_binary) from the PyPI `kenlm` source distribution,
# into a cache outside the repository: they are needed to train a language model, never to serve.
#
#   training/gleu/build_lmplz.sh            # -> ~/.cache/fluency-scorer/kenlm/bin/{lmplz,build_binary}
#   KENLM_CACHE=/opt/kenlm JOBS=2 training/gleu/build_lmplz.sh
#
# Debian packages for cmake, Boost and the compression libraries are installed only if missing.
# Idempotent: an existing build is kept (delete the cache folder to rebuild).
set -euo pipefail

CACHE="${KENLM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/fluency-scorer/kenlm}"
JOBS="${JOBS:-2}"
PYTHON="${PYTHON:-$(cd "$(dirname "$0")/../.." && pwd)/.venv/bin/python}"
[ -x "$PYTHON" ] || PYTHON=python3
# Absolute (the venv's link itself, not its target): the build below runs from the cache folder.
case "$PYTHON" in */*) PYTHON="$(cd "$(dirname "$PYTHON")" && pwd)/$(basename "$PYTHON")" ;; esac
KENLM_SPEC="${KENLM_SPEC:-kenlm}"  # e.g. kenlm==0.3.0 to pin the source release

if [ -x "$CACHE/bin/lmplz" ] && [ -x "$CACHE/bin/build_binary" ]; then
  echo "already built: $CACHE/bin/lmplz"
  exit 0
fi

PACKAGES=(build-essential cmake libboost-program-options-dev libboost-system-dev
  libboost-thread-dev libboost-test-dev zlib1g-dev libbz2-dev liblzma-dev)
missing=()
for p in "${PACKAGES[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  SUDO=$([ "$(id -u)" = 0 ] || echo sudo)
  echo "installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"
fi

mkdir -p "$CACHE/src"
cd "$CACHE/src"
if ! ls kenlm-*.tar.gz >/dev/null 2>&1; then
  "$PYTHON" -m pip download --no-deps --no-binary :all: --no-build-isolation -d . "$KENLM_SPEC"
fi
SDIST="$(ls kenlm-*.tar.gz | sort -V | tail -1)"
SRC="$CACHE/src/${SDIST%.tar.gz}"
[ -d "$SRC" ] || tar xzf "$SDIST"

cmake -S "$SRC" -B "$CACHE/build" -DCMAKE_BUILD_TYPE=Release -DKENLM_MAX_ORDER=6 \
  -DCMAKE_RUNTIME_OUTPUT_DIRECTORY="$CACHE/bin" >"$CACHE/cmake.log"
cmake --build "$CACHE/build" -j "$JOBS" --target lmplz build_binary
for tool in lmplz build_binary; do
  [ -x "$CACHE/bin/$tool" ] || cp "$CACHE/build/bin/$tool" "$CACHE/bin/$tool"
done
# Smoke test: estimate a toy bigram model, so a tool that links but cannot run fails here, not
# later (grep -c reads to the end; grep -q would stop early and SIGPIPE lmplz under pipefail).
printf 'a b c\na c b\n' | "$CACHE/bin/lmplz" -o 2 --discount_fallback -S 100M -T /tmp/ 2>/dev/null |
  grep -c '^.2-grams:' >/dev/null || { echo "lmplz built but does not run" >&2; exit 1; }
echo "${SDIST%.tar.gz}" >"$CACHE/bin/VERSION"
echo "built $CACHE/bin/lmplz and build_binary from $SDIST"
