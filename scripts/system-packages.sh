#!/usr/bin/env bash
# The system packages `make test` needs beyond Python 3.11 and Node: Debian's chromium and
# chromium-driver, which the console's browser test drives (nothing downloads a browser at run time).
# Present: nothing to do. Missing: installed with apt-get (through sudo when not root), or, when
# that cannot be done here, stop at once with the exact command to run. `make test` and `.ci/run`
# both call it first.
#
#   scripts/system-packages.sh             check, install what is missing
#   scripts/system-packages.sh --dry-run   say what it would do; apt-get only simulates the install
#   SENDLEDGER_SKIP_BROWSER=1              the browser test is skipped: nothing is needed
set -euo pipefail

PACKAGES=(chromium chromium-driver)
dry_run=0
[ "${1:-}" = "--dry-run" ] && dry_run=1

say() { printf 'system packages: %s\n' "$*" >&2; }

if [ "${SENDLEDGER_SKIP_BROWSER:-}" = "1" ]; then
    exit 0
fi
missing=()
command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || missing+=(chromium)
command -v chromedriver >/dev/null 2>&1 || missing+=(chromium-driver)
if [ ${#missing[@]} -eq 0 ]; then
    exit 0
fi

install="apt-get install -y ${PACKAGES[*]}"
if ! command -v apt-get >/dev/null 2>&1; then
    say "the console's browser test needs Chromium and its chromedriver (missing: ${missing[*]})," \
        "and there is no apt-get here: install them with your package manager," \
        "or run SENDLEDGER_SKIP_BROWSER=1 make test to skip that test"
    exit 1
fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1 && sudo -n true >/dev/null 2>&1; then
        sudo="sudo"
    else
        say "missing: ${missing[*]}. Install them, then run make test again:" \
            "sudo apt-get update && sudo ${install}"
        exit 1
    fi
fi
run="${sudo:+$sudo }apt-get update && ${sudo:+$sudo }DEBIAN_FRONTEND=noninteractive ${install}"
if [ "$dry_run" -eq 1 ]; then
    say "missing: ${missing[*]}; would run: ${run}"
    apt-get install --simulate "${PACKAGES[@]}" >&2
    exit 0
fi
say "missing: ${missing[*]}; running: ${run}"
if ! { $sudo apt-get update -qq && $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${PACKAGES[@]}"; }; then
    say "the install failed; run it yourself, then make test again: ${sudo:+sudo }apt-get update && ${sudo:+sudo }${install}"
    exit 1
fi
