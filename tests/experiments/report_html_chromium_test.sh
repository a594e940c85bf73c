#!/usr/bin/env bash
# report.html in headless Chromium: a small real sweep (gpt-tiny: HYBRID and E5M2 x margin 0 and
# 40, so that there are curves, a heatmap and a failing run), its report loaded with
# `chromium --headless --dump-dom`. Passes when the page's self-check ran (data-check="ok": every
# chart drew its marks), the expected charts are in the DOM, and Chromium logged no console
# message at all (the page logs only errors). A screenshot is taken too, and must not be blank.
# Usage: report_html_chromium_test.sh FP8LAB_EXECUTABLE. Exit 77 (skipped) without chromium.
set -euo pipefail
fp8lab=$1
chromium=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$chromium" ]; then
  echo "chromium is not installed (scripts/setup installs the Debian package): skipped"
  exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat >"$work/sweep.yaml" <<'YAML'
method: grid
workloads: [gpt-tiny]
seeds: [0]
parameters:
  fp8_format: {values: [HYBRID, E5M2]}
  margin: {values: [0, 40]}
YAML
"$fp8lab" sweep "$work/sweep.yaml" --out "$work/out" --jobs 2 --steps 30 >"$work/sweep.log" 2>&1 ||
  { cat "$work/sweep.log"; echo "FAIL: the sweep failed"; exit 1; }
report="$work/out/report.html"

flags=(--headless --no-sandbox --disable-gpu --user-data-dir="$work/profile"
       --enable-logging=stderr --v=0)
timeout 120 "$chromium" "${flags[@]}" --dump-dom "file://$report" >"$work/dom.html" 2>"$work/chromium.log"
status=0
if grep -q ':CONSOLE' "$work/chromium.log"; then
  echo "FAIL: console messages while loading $report:"; grep ':CONSOLE' "$work/chromium.log"; status=1
fi
grep -q 'data-check="ok"' "$work/dom.html" ||
  { echo "FAIL: the page's chart self-check did not report ok"; status=1; }
charts=$(grep -o 'data-charts="[0-9]*"' "$work/dom.html" | grep -o '[0-9]*' || echo 0)
lines=$(grep -c 'data-kind="line"' "$work/dom.html" || true)
heatmaps=$(grep -c 'data-kind="heatmap"' "$work/dom.html" || true)
echo "charts: $charts (line: $lines, heatmap: $heatmaps)"
[ "$charts" -ge 10 ] || { echo "FAIL: expected at least 10 charts"; status=1; }
[ "$heatmaps" -ge 1 ] || { echo "FAIL: no heatmap"; status=1; }
grep -q 'failed to train' "$work/dom.html" || { echo "FAIL: the failing run is not reported"; status=1; }

timeout 120 "$chromium" "${flags[@]}" --hide-scrollbars --window-size=1400,1800 \
  --screenshot="$work/shot.png" "file://$report" >/dev/null 2>>"$work/chromium.log"
size=$(stat -c %s "$work/shot.png" 2>/dev/null || echo 0)
echo "screenshot: $size bytes"
[ "$size" -gt 20000 ] || { echo "FAIL: the screenshot is missing or blank"; status=1; }
[ $status -eq 0 ] && echo "PASS: $report renders in headless Chromium without console messages"
exit $status
