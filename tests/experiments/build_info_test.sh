#!/usr/bin/env bash
# cmake/fp8lab_build_info.cmake (what fp8lab --version and every run record say about the build),
# run on scratch git repositories: the commit and dirtiness of a checkout, a new commit seen at
# the next run (no reconfigure), the file left untouched when nothing changed (so a build after no
# commit recompiles nothing), "unknown" outside a checkout of the directory itself.
#
#   build_info_test.sh SCRIPT
set -uo pipefail
script=$1
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
git_() { git -C "$repo" -c user.name=test -c user.email=test@example.com "$@" >/dev/null; }
# Runs the script for source directory $1; the generated text in $scratch/info.cpp.
generate() { cmake -DSOURCE_DIR="$1" -DOUTPUT="$scratch/info.cpp" -DVERSION=9.8.7 -P "$script"; }
expect() {  # expect WHAT COMMIT DIRTY
  grep -qF "fp8lab_version() { return \"9.8.7\"; }" "$scratch/info.cpp" || fail "$1: version"
  grep -qF "git_commit() { return \"$2\"; }" "$scratch/info.cpp" ||
    fail "$1: commit, expected $2: $(grep git_commit "$scratch/info.cpp")"
  grep -qF "git_dirty() { return $3; }" "$scratch/info.cpp" ||
    fail "$1: dirty, expected $3: $(grep git_dirty "$scratch/info.cpp")"
}

repo="$scratch/repo"
mkdir -p "$repo/sub"
git init -q "$repo"
echo one >"$repo/file.txt"
git_ add file.txt
git_ commit -qm one
generate "$repo"
expect "clean checkout" "$(git -C "$repo" rev-parse HEAD)" false
before=$(stat -c %y "$scratch/info.cpp")
sleep 1.1
generate "$repo"
[[ $(stat -c %y "$scratch/info.cpp") == "$before" ]] || fail "rewritten though nothing changed"

echo scratch >"$repo/untracked.txt"
generate "$repo"
expect "untracked file" "$(git -C "$repo" rev-parse HEAD)" false
echo two >"$repo/file.txt"
generate "$repo"
expect "edited tracked file" "$(git -C "$repo" rev-parse HEAD)" true
git_ commit -qam two
generate "$repo"
expect "new commit" "$(git -C "$repo" rev-parse HEAD)" false

# A directory inside someone else's checkout is not a checkout of fp8lab: its commit is not ours.
generate "$repo/sub"
expect "subdirectory of another checkout" unknown std::nullopt
mkdir -p "$scratch/plain"
generate "$scratch/plain"
expect "no git checkout" unknown std::nullopt

[[ $failures == 0 ]] && echo "fp8lab_build_info.cmake: 7 cases"
exit $((failures > 0))
