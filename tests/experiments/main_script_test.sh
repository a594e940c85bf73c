#!/usr/bin/env bash
# scripts/main's arguments to fp8lab sweep (issue #13 item 5, issue #21): the default uses every
# core through the sweep's own choice of runs x threads; the user's --jobs N / --jobs=N pass once,
# and --out replaces the script's default instead of being passed twice, which fp8lab sweep
# refuses.
# FP8LAB_MAIN_PRINT_COMMAND=1 prints the command without setting up or building; each printed
# command is then run with --dry-run by the real fp8lab (argument $1), which parses it exactly as
# scripts/main would have it run.
set -uo pipefail
fp8lab=$1
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# Prints scripts/main's sweep command for "$@", one argument per line.
main_command() { FP8LAB_MAIN_PRINT_COMMAND=1 "$root/scripts/main" "$@"; }
# How many lines of stdin equal $1.
count() { grep -cxF -- "$1" || true; }
# The line after the line equal to $1.
after() { grep -xF -A1 -- "$1" | tail -n 1; }
# Runs a printed command (stdin) with the fp8lab under test and --dry-run; its exit code.
dry_run() {
  local -a argv
  mapfile -t argv
  "$fp8lab" "${argv[@]:1}" --dry-run >/dev/null 2>"$scratch/dry-run.err"
}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

default=$(main_command)
# Every core: no --jobs or --threads, so that the sweep chooses runs x threads from the CPUs it
# may use (nproc) and the runs it has left (experiments_threads_plan_test checks the choice).
[[ $(count --jobs <<<"$default") == 0 ]] || fail "default: expected no --jobs, got: $default"
[[ $(count --threads <<<"$default") == 0 ]] || fail "default: expected no --threads: $default"
[[ $(count --out <<<"$default") == 1 ]] || fail "default: expected one --out: $default"
[[ $(head -n 1 <<<"$default") == "$root/build/experiments/fp8lab" ]] || fail "default: $default"
dry_run <<<"$default" || fail "default: fp8lab refused it: $(cat "$scratch/dry-run.err")"

user=$(main_command --jobs 3)
[[ $(count --jobs <<<"$user") == 1 ]] || fail "--jobs 3: expected one --jobs, got: $user"
[[ $(after --jobs <<<"$user") == 3 ]] || fail "--jobs 3: the user's value lost: $user"
dry_run <<<"$user" || fail "--jobs 3: fp8lab refused it: $(cat "$scratch/dry-run.err")"

equals=$(main_command --jobs=5 --out "$scratch/out")
[[ $(count --jobs <<<"$equals") == 0 && $(count --jobs=5 <<<"$equals") == 1 ]] ||
  fail "--jobs=5: $equals"
[[ $(count --out <<<"$equals") == 1 && $(after --out <<<"$equals") == "$scratch/out" ]] ||
  fail "--out: the user's directory lost: $equals"
dry_run <<<"$equals" || fail "--jobs=5: fp8lab refused it: $(cat "$scratch/dry-run.err")"

# The check can fail: a command with --jobs twice is refused.
twice=$(printf '%s\n' "$user" --jobs 3)
if dry_run <<<"$twice"; then
  fail "fp8lab accepted --jobs twice: the dry-run check proves nothing"
fi

[[ $failures == 0 ]] && echo "scripts/main: the user's --jobs and --out win (4 cases)"
exit $((failures > 0))
