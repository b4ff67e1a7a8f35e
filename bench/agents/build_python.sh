#!/usr/bin/env bash
# Python 3.13 for the agents that need Python >= 3.12 (fast-agent-mcp, mistral-vibe,
# kimi-cli), built from Debian's source package (trixie's python3.13: the only registry this
# machine reaches that has a newer CPython) into bench/.venvs/_python3.13 (git-ignored).
# Needs apt-get, gcc and the -dev headers the Debian machine has (libssl, libffi, zlib,
# sqlite3, bz2, lzma, readline, ncurses, uuid). About 3 minutes on 2 idle cores.
#   bench/agents/build_python.sh [PREFIX]     (default: bench/.venvs/_python3.13)
set -euo pipefail
cd "$(dirname "$0")/../.."
prefix="$(realpath -m "${1:-$PWD/bench/.venvs/_python3.13}")"
if "$prefix/bin/python3.13" -c "import ssl, sqlite3, ctypes, venv" 2>/dev/null; then
    echo "python 3.13 ready: $prefix/bin/python3.13"
    exit 0
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/lists/partial"
# A sources list of its own: the machine's apt configuration is left as it is.
echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian trixie main" >"$work/sources.list"
apt_opts=(-o "Dir::Etc::sourcelist=$work/sources.list" -o "Dir::Etc::sourceparts=-"
          -o "Dir::State::Lists=$work/lists" -o "APT::Get::List-Cleanup=0")
apt-get "${apt_opts[@]}" update -qq
(cd "$work" && apt-get "${apt_opts[@]}" source --download-only -qq python3.13)
tar -xJf "$work"/python3.13_*.orig.tar.xz -C "$work"
cd "$work"/Python-3.13.*/
./configure --prefix="$prefix" -q
make -j"$(nproc)" -s >/dev/null 2>"$work/build.log" || { tail -30 "$work/build.log"; exit 1; }
make -s altinstall >/dev/null 2>>"$work/build.log" || { tail -30 "$work/build.log"; exit 1; }
"$prefix/bin/python3.13" -c "import ssl, sqlite3, ctypes, venv; print('python 3.13 ready:', ssl.OPENSSL_VERSION)"
