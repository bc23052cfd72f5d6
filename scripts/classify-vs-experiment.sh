#!/usr/bin/env bash
# `srl classify` against the collective-classification experiment on Cora (issue 26):
# runs `srl classify --folds 10 --seed 20061001` for each of the experiment's ten methods
# and checks that every accuracy equals, to the last bit, the experiment's Cora RS cell in
# RESULTS (default docs/results/collective-classification/results.json); prints the CLI's
# method time (training + inference summed over the folds, as the experiment's `seconds`
# rows measure it) and its CPU time beside the experiment's seconds. Exit 1 on a mismatch.
#
# Usage: scripts/classify-vs-experiment.sh [SRL_BINARY] [RESULTS]
# Needs $SRL_DATA_DIR/cora (else it says so and exits 0) and python3.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
srl="${1:-target/release/srl}"
results="${2:-docs/results/collective-classification/results.json}"
cora="${SRL_DATA_DIR:-../shared/data}/cora"
if [ ! -f "$cora/cora.cites" ]; then
  echo "skipped: no Cora, looked at $cora"
  exit 0
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
TIMEFORMAT='%U %S'
for m in "co nb" "co lr" "ica nb" "ica lr" "gs nb" "gs lr" "lbp lr" "mf lr" "co mnb" "ica mnb"; do
  set -- $m
  { time "$srl" --quiet --json classify --content "$cora/cora.content.gz" --cites "$cora/cora.cites" \
      --folds 10 --seed 20061001 --method "$1" --local "$2" > "$work/$1-$2.json"; } 2> "$work/$1-$2.time"
done
python3 - "$work" "$results" <<'PY'
import json, sys, os
work, results = sys.argv[1], sys.argv[2]
rows = json.load(open(results))["rows"]
cell = {(r["method"], r["metric"]): r["value"] for r in rows
        if r["dataset"] == "cora" and r.get("protocol") == "RS"}
bad = 0
print(f"{'method':8} {'srl classify':>20} {'experiment':>20}  same  {'cli method s':>12} {'cli cpu s':>9} {'exp s':>7}")
for f in sorted(os.listdir(work)):
    if not f.endswith(".json"):
        continue
    j = json.load(open(os.path.join(work, f)))
    user, sys_ = map(float, open(os.path.join(work, f[:-5] + ".time")).read().split()[-2:])
    name = j["name"]
    want = cell.get((name, "accuracy"))
    same = want is not None and j["accuracy"] == want
    bad += not same
    print(f"{name:8} {j['accuracy']!r:>20} {want!r:>20}  {'yes' if same else 'NO':4}  "
          f"{j['method_seconds']:12.3f} {user + sys_:9.2f} {cell.get((name, 'seconds'), float('nan')):7.3f}")
sys.exit(1 if bad else 0)
PY
