#!/usr/bin/env bash
# Make bubblewrap usable for assay's agent sandbox on a Linux CI runner.
#
# Used by action.yml (before `assay ci`) and by this repository's CI. ISOLATION is the
# action's `isolation` input: `none` does nothing at all.
#
# Ubuntu 24.04 lets only programs with an AppArmor profile granting `userns` create user
# namespaces (kernel.apparmor_restrict_unprivileged_userns=1), which bwrap needs. A
# GitHub runner is a throwaway VM with passwordless sudo, so: install bwrap if missing;
# if it cannot build a sandbox, give the bwrap binary such a profile (what Ubuntu does
# for the programs it ships with a sandbox) and load it; only if that fails, lift the
# restriction for the whole runner, saying so. assay decides what `auto` and `bwrap` then
# mean; this script only prepares and always exits 0.
set -uo pipefail

if [ "${ISOLATION:-auto}" = none ]; then
  exit 0
fi
as_root() {
  if [ "$(id -u)" = 0 ]; then
    "$@"
  elif sudo -n true 2>/dev/null; then
    sudo -n "$@"
  else
    return 1
  fi
}
works() {
  bwrap --ro-bind / / --dev /dev --proc /proc --unshare-pid --unshare-ipc --unshare-uts \
    --die-with-parent /bin/true >/dev/null 2>&1
}
if ! command -v bwrap >/dev/null 2>&1; then
  echo "assay: installing bubblewrap for the agent sandbox"
  apt_install() {
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap >/dev/null
  }
  if ! apt_install && ! { as_root apt-get update -qq && apt_install; }; then
    echo "::warning title=assay: sandbox::could not install bubblewrap with apt-get"
    exit 0
  fi
fi
if works; then
  echo "assay: bwrap can build its sandbox"
  exit 0
fi
bwrap_path=$(readlink -f "$(command -v bwrap)")
if [ -d /sys/kernel/security/apparmor ] && command -v apparmor_parser >/dev/null 2>&1; then
  profile=/etc/apparmor.d/assay-bwrap
  printf '%s\n' 'abi <abi/4.0>,' 'include <tunables/global>' \
    "profile assay-bwrap $bwrap_path flags=(unconfined) {" '  userns,' '}' \
    | as_root tee "$profile" >/dev/null || true
  if as_root apparmor_parser -r "$profile" && works; then
    echo "assay: loaded an AppArmor profile letting $bwrap_path create user namespaces"
    exit 0
  fi
fi
if as_root sysctl -q -w kernel.apparmor_restrict_unprivileged_userns=0 && works; then
  echo "::notice title=assay: sandbox::no AppArmor profile could be loaded for bwrap; lifted the restriction on unprivileged user namespaces for this runner (kernel.apparmor_restrict_unprivileged_userns=0)"
  exit 0
fi
echo "::warning title=assay: sandbox::bwrap cannot create its namespaces on this runner"
