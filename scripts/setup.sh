#!/usr/bin/env bash
# Installs what zrec needs to build and test, from Debian's packages. Idempotent:
# installs only what is missing, so it is cheap to run every time.
set -euo pipefail

packages=(
  cmake ninja-build g++ pkg-config ccache  # ccache: scripts/build.sh, cache under ~/.cache/ccache
  libcurl4-openssl-dev  # remote stores (zrec/remote.h): its headers; libcurl is loaded when a URL is read
  libzstd-dev libssl-dev libcli11-dev libfmt-dev libmsgpack-cxx-dev libspdlog-dev doctest-dev
  python3 python3-numpy python3-msgpack python3-zstandard zstd
  python3-h5py python3-lmdb  # scripts/bench_peers.py
  libarchive-dev liblmdb-dev libhdf5-dev  # append-tar, append-lmdb, append-h5
  zlib1g-dev libbz2-dev  # append-h5 decodes gzip and bzip2 chunks itself, bounded (apps/cli/import/h5_bounded_filters.h)
  hdf5-plugin-lzf liblzf1 hdf5-filter-plugin hdf5-filter-plugin-blosc-serial hdf5-filter-plugin-zfp-serial  # tests/cli/test_append_h5.py: filtered HDF5 files h5py writes
  time util-linux parallel
  clang-format  # tests/cli/test_format.sh: the sources keep .clang-format's layout
  jq  # tests/cli/test_readme_examples.py: README's resume example reads info --json with it
  bsdutils  # script(1), for tests/cli/test_progress.sh
  strace  # tests/cli/test_publish_faults.py, test_fault_inject.py: fault injection (inject=SYSCALL:error=E)
  zsh  # tests/cli/test_install.sh: the installed zsh completion parses
  clang libclang-rt-14-dev  # scripts/fuzz.sh: libFuzzer (clang++ -fsanitize=fuzzer)
  slurmd slurmctld slurm-client munge procps  # tests/cli/test_slurm.sh: a live single-node Slurm cluster (pgrep, ps)
  libcpp-httplib-dev libpng-dev  # zrec view: its HTTP server module (cpp-httplib) and PNG pictures (libpng, linked statically)
  nginx-light openssl curl  # tests/cli/test_remote.py: a real web server (HTTP and HTTPS) serving stores; scripts/bench_remote.py: curl, the baseline
  chromium chromium-driver python3-selenium  # tests/cli/test_view_browser.py: zrec view's page in headless Chromium
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}" >&2
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
