#!/usr/bin/env bash
# Builds the release files of genapi into dist/release/ (or $GENAPI_RELEASE_DIR):
#   genapi-<version>-linux-x64            x86-64
#   genapi-<version>-linux-x64-baseline   x86-64 CPUs without AVX2
#   genapi-<version>-linux-arm64          64-bit ARM
#   install.sh, genapi.service, genapi.env   what `sudo ./install.sh genapi-<version>-linux-...` needs
#   SHA256SUMS
# Each executable comes from scripts/build.ts (no identifier minification, no .env/bunfig autoload).
# For a target other than this machine's, Bun fetches that target's runtime from the npm registry
# (@oven/bun-linux-x64-baseline, @oven/bun-linux-aarch64) once and caches it; a target whose
# runtime cannot be had is skipped with the reason. Name targets to build only those:
#   scripts/release.sh linux-x64 linux-arm64
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bun="node_modules/.bin/bun"
[[ -x "$bun" ]] || bun="$(command -v bun)" || { echo "release.sh: no Bun (run npm install first)" >&2; exit 1; }
version="$("$bun" -e 'console.log(require("./package.json").version)')"
out="${GENAPI_RELEASE_DIR:-dist/release}"

declare -A bun_targets=(
  [linux-x64]=bun-linux-x64
  [linux-x64-baseline]=bun-linux-x64-baseline
  [linux-arm64]=bun-linux-arm64
)
targets=("$@")
[[ ${#targets[@]} -gt 0 ]] || targets=(linux-x64 linux-x64-baseline linux-arm64)
for name in "${targets[@]}"; do
  [[ -n "${bun_targets[$name]:-}" ]] || { echo "release.sh: unknown target $name (${!bun_targets[*]})" >&2; exit 2; }
done

# The ELF machine field (bytes 18-19, little-endian) of a file: 3e00 x86-64, b700 aarch64.
elf_machine() { od -An -tx1 -j18 -N2 "$1" | tr -d ' \n'; }
host_machine="$(elf_machine "$(readlink -f "$bun")")"

rm -rf "$out"
mkdir -p "$out"
built=()
skipped=()
for name in "${targets[@]}"; do
  file="genapi-$version-$name"
  log="$(mktemp)"
  # Bytecode only where the build can be run as a check below: another CPU's executable carries
  # its source alone (what JavaScriptCore would fall back to if it refused the bytecode anyway).
  bytecode=--bytecode
  case "$name:$host_machine" in linux-x64*:3e00 | linux-arm64:b700) ;; *) bytecode=--no-bytecode ;; esac
  if ! "$bun" scripts/build.ts "$bytecode" --target "${bun_targets[$name]}" --outfile "$out/$file" >"$log" 2>&1; then
    if [[ "$name" == linux-x64 ]]; then
      cat "$log" >&2
      echo "release.sh: building $file failed" >&2
      exit 1
    fi
    echo "release.sh: skipped $file: Bun could not build it (its runtime could not be fetched?): $(grep -v '^\s*$' "$log" | tail -n 1)" >&2
    rm -f "$log" "$out/$file"
    skipped+=("$file")
    continue
  fi
  rm -f "$log"
  machine="$(elf_machine "$out/$file")"
  case "$name:$machine" in
    linux-x64*:3e00 | linux-arm64:b700) ;;
    *) echo "release.sh: $file has ELF machine $machine, not $name" >&2; exit 1 ;;
  esac
  # Run what this CPU can run, as a last check of the build.
  if [[ "$machine" == "$host_machine" ]]; then
    reported="$("$out/$file" --version)"
    [[ "$reported" == "genapi $version" ]] || { echo "release.sh: $file --version says \"$reported\"" >&2; exit 1; }
  fi
  built+=("$file")
done

cp scripts/install.sh deploy/genapi.service deploy/genapi.env "$out/"
chmod 0755 "$out/install.sh"
(cd "$out" && sha256sum -- "${built[@]}" install.sh genapi.service genapi.env > SHA256SUMS)

echo "release.sh: genapi $version in $out:"
(cd "$out" && stat -c '%s %n' -- "${built[@]}" install.sh genapi.service genapi.env SHA256SUMS |
  awk '{ if ($1 >= 1048576) printf "  %7.1f MiB  %s\n", $1 / 1048576, $2; else printf "  %7.1f KiB  %s\n", $1 / 1024, $2 }')
if [[ ${#skipped[@]} -gt 0 ]]; then
  echo "release.sh: not built (see above): ${skipped[*]}"
fi
