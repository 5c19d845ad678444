#!/usr/bin/env bash
# Installs (or upgrades, or removes) genapi as a systemd service. Run as root on the target host.
# Safe to run again: the binary and the unit are replaced, the service restarted, and an existing
# /etc/genapi/genapi.env is never touched.
set -euo pipefail

usage() {
  cat <<'EOF'
Usage: install.sh [PATH_TO_BINARY]   install or upgrade genapi (default binary: ./genapi, else ./dist/genapi)
       install.sh --uninstall        stop and remove the service and the binary
       install.sh --help

Installs:
  /usr/local/bin/genapi                 the executable (replaced on every run)
  /etc/systemd/system/genapi.service    the unit (replaced; put your overrides in `systemctl edit genapi`)
  /etc/genapi/genapi.env                the settings (written only when missing, never overwritten)
then enables and starts genapi.service, or restarts it when it already runs.
The unit and the env file are taken from beside this script, or from ../deploy/ in a source checkout.

--uninstall keeps /etc/genapi (your settings) and /var/lib/private/genapi (the database with the
API keys and usage counters); delete them yourself to remove every trace.

Environment:
  GENAPI_ROOT=DIR   install under DIR instead of / (packaging, tests); systemctl is then not called
                    unless SYSTEMCTL is set too
  SYSTEMCTL=CMD     the systemctl command to run (default: systemctl)
EOF
}

root="${GENAPI_ROOT:-}"
if [[ -n "$root" ]]; then
  systemctl_cmd="${SYSTEMCTL:-}"
else
  systemctl_cmd="${SYSTEMCTL:-systemctl}"
fi
bin_path="$root/usr/local/bin/genapi"
unit_path="$root/etc/systemd/system/genapi.service"
env_dir="$root/etc/genapi"
env_path="$env_dir/genapi.env"
script_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

say() { printf 'install.sh: %s\n' "$*"; }
die() { printf 'install.sh: %s\n' "$*" >&2; exit 1; }

run_systemctl() {
  # Word splitting on purpose: SYSTEMCTL may carry arguments.
  # shellcheck disable=SC2086
  $systemctl_cmd "$@"
}

# The first of the candidate paths that exists.
find_file() {
  local candidate
  for candidate in "$@"; do
    if [[ -f "$candidate" ]]; then
      printf '%s\n' "$candidate"
      return 0
    fi
  done
  return 1
}

install_genapi() {
  local source_bin="${1:-}"
  if [[ -z "$source_bin" ]]; then
    source_bin="$(find_file ./genapi ./dist/genapi)" || die "no ./genapi or ./dist/genapi here; pass the binary's path (install.sh PATH_TO_BINARY)"
  fi
  [[ -f "$source_bin" ]] || die "$source_bin is not a file"
  local unit_source env_source version
  unit_source="$(find_file "$script_dir/genapi.service" "$script_dir/../deploy/genapi.service")" ||
    die "genapi.service not found beside install.sh nor in ../deploy/"
  env_source="$(find_file "$script_dir/genapi.env" "$script_dir/../deploy/genapi.env")" ||
    die "genapi.env not found beside install.sh nor in ../deploy/"

  install -d -m 0755 "$root/usr/local/bin" "$root/etc/systemd/system"
  # Copy beside the target and try the copy (a binary for another CPU, a truncated download), then
  # rename: the running binary is never written in place nor replaced by one that cannot start.
  install -m 0755 "$source_bin" "$bin_path.new"
  if ! version="$("$bin_path.new" --version 2>&1)"; then
    rm -f "$bin_path.new"
    die "$source_bin does not run on this host: $version"
  fi
  mv -f "$bin_path.new" "$bin_path"
  say "installed $version as $bin_path"

  install -m 0644 "$unit_source" "$unit_path"
  say "installed $unit_path"

  if [[ -e "$env_path" ]]; then
    say "kept your $env_path (compare it with $env_source for new settings)"
  else
    install -d -m 0755 "$env_dir"
    install -m 0640 "$env_source" "$env_path"
    say "wrote $env_path: edit it, then run systemctl restart genapi"
  fi

  if [[ -z "$systemctl_cmd" ]]; then
    say "GENAPI_ROOT is set and SYSTEMCTL is not: did not enable or start genapi.service"
    return 0
  fi
  run_systemctl daemon-reload
  if run_systemctl is-active --quiet genapi.service; then
    run_systemctl enable genapi.service
    run_systemctl restart genapi.service
    say "restarted genapi.service"
  else
    run_systemctl enable --now genapi.service
    say "enabled and started genapi.service (logs: journalctl -u genapi)"
  fi
}

uninstall_genapi() {
  if [[ -n "$systemctl_cmd" && -e "$unit_path" ]]; then
    run_systemctl disable --now genapi.service
  fi
  rm -f "$unit_path" "$bin_path" "$bin_path.new"
  if [[ -n "$systemctl_cmd" ]]; then
    run_systemctl daemon-reload
  fi
  say "removed $bin_path and $unit_path"
  say "kept $env_dir (settings) and /var/lib/private/genapi (database); delete them yourself to remove all data"
  if [[ -d "$unit_path.d" ]]; then
    say "kept your overrides in $unit_path.d"
  fi
}

case "${1:-}" in
  -h | --help)
    usage
    exit 0
    ;;
  --uninstall)
    [[ $# -eq 1 ]] || die "--uninstall takes no other argument"
    mode=uninstall
    ;;
  -*)
    die "unknown option $1 (try --help)"
    ;;
  *)
    [[ $# -le 1 ]] || die "expected at most one argument, the binary's path (try --help)"
    mode=install
    ;;
esac

if [[ -z "$root" && "$(id -u)" -ne 0 ]]; then
  die "run me as root (sudo $0 $*)"
fi

if [[ "$mode" == uninstall ]]; then
  uninstall_genapi
else
  install_genapi "${1:-}"
fi
