#!/usr/bin/env bash
# Times kinformer's oneDNN backend and the PyTorch CPU reference (tools/reference/time_model.py)
# on the same config (informer-model.md §1 default), batch and seq_len, alternating within one run,
# and prints one JSON line per point with the ratio (pytorch median / onednn median).
#
# usage: bench/bench_model_vs_pytorch.sh [BUILD_DIR]        (default build)
# env:   POINTS="32:96 32:720"  (batch:seq_len pairs)   RUNS=5   THREADS=2
# Both sides run with OMP_NUM_THREADS=$THREADS (the box has 2 cores) and OMP_WAIT_POLICY=PASSIVE:
# on a shared, loaded machine libgomp's spinning threads otherwise cost both sides seconds.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
export OMP_NUM_THREADS=${THREADS:-2}
export OMP_WAIT_POLICY=PASSIVE
python=/usr/bin/python3   # Debian's python3 has python3-torch; a pyenv python3 may come first on PATH
runs=${RUNS:-5}
field() { "$python" -c "import json,sys; print(json.loads(sys.argv[1])[sys.argv[2]])" "$1" "$2"; }
echo "{\"bench\":\"setup\",\"script\":\"bench_model_vs_pytorch\",\"threads\":$OMP_NUM_THREADS,\"omp_wait_policy\":\"PASSIVE\",\"load_avg\":\"$(cut -d' ' -f1-3 /proc/loadavg)\"}"
for point in ${POINTS:-32:96 32:720}; do
  batch=${point%%:*}
  seq_len=${point##*:}
  ours=$("$build/bin/bench_model" --backend onednn --seq-lens "$seq_len" --batches "$batch" --runs "$runs" 2>/dev/null | grep '"backend":"onednn"')
  theirs=$("$python" tools/reference/time_model.py --seq_len "$seq_len" --batch "$batch" --runs "$runs")
  ours_ms=$(field "$ours" median_ms)
  theirs_ms=$(field "$theirs" median_ms)
  ratio=$("$python" -c "print(round($theirs_ms / $ours_ms, 2))")
  echo "{\"bench\":\"forecast\",\"backend\":\"onednn\",\"batch\":$batch,\"seq_len\":$seq_len,\"runs\":$runs,\"median_ms\":$ours_ms,\"samples_per_s\":$(field "$ours" samples_per_s),\"baseline\":\"pytorch\",\"baseline_median_ms\":$theirs_ms,\"ratio\":$ratio}"
done
