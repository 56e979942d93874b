#!/usr/bin/env bash
# Issue 26's GPU measurements in one command, for a lent GPU machine (or any CUDA machine):
#   scripts/gpu_runs.sh [tests] [replay] [arena] [fight] [train-A] [train-B] ...   (default: tests replay arena)
# (train-X: one `train --config ${CONFIG:-gpu} --device cuda` run named X; MINUTES overrides its length,
#  TRAIN_TIMEOUT its time limit in seconds; CONFIG=gpu-fight trains fights)
# Writes logs and JSON under $OUT (default ./gpu-out). Where the machine cannot reach PyPI, the
# packages it lacks travel as wheels in .whl/ (and py-ubjson's pure-Python source in .whl_src/).
set -u
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
PY=${PYTHON:-python3}
if [ -d .whl ]; then
  $PY -m pip install -q --no-index --no-deps --no-compile --upgrade --target /tmp/site .whl/*.whl || exit 1
  export PYTHONPATH=/tmp/site:$PWD/.whl_src:${PYTHONPATH:-}
fi
$PY -c "import melee_agent.manager" 2>/dev/null || \
  $PY -m pip install -q --no-index --no-deps --no-build-isolation -e . >"$OUT/install.log" 2>&1 || \
  { cat "$OUT/install.log"; exit 1; }
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  $PY -c "import torch; print('torch', torch.__version__, torch.cuda.get_device_name(), 'cuda', torch.version.cuda)"
} | tee "$OUT/gpu.txt"

stages=${*:-tests replay arena}
for s in $stages; do
  echo "=== $s ($(date +%T))"
  case $s in
    tests)
      timeout 150 $PY -m pytest -q -x -p no:cacheprovider tests/test_captured_step.py tests/test_learner.py \
        tests/test_replay.py tests/test_prioritized.py 2>&1 | tee "$OUT/tests.log" | tail -15 ;;
    replay)
      timeout 380 $PY -m melee_agent.cli bench replay --device cuda --json "$OUT/bench-replay-cuda.json" \
        2>&1 | tee "$OUT/bench-replay.log" | tail -45 ;;
    arena)
      timeout 250 $PY -m melee_agent.cli bench arena --device cuda --seconds 2 ${ARENA_ENVS:+--envs $ARENA_ENVS} --json "$OUT/bench-arena-cuda.json" \
        2>&1 | tee "$OUT/bench-arena.log" | tail -12 ;;
    fight)
      timeout 480 $PY -m melee_agent.cli bench arena --device cuda --game fight --envs 4096,65536,262144 \
        --json "$OUT/bench-arena-fight-cuda.json" 2>&1 | tee "$OUT/bench-arena-fight.log" | tail -10 ;;
    train-*)
      run=${s#train-}
      timeout ${TRAIN_TIMEOUT:-330} $PY -m melee_agent.cli train --config ${CONFIG:-gpu} --device cuda --no-progress ${MINUTES:+--minutes $MINUTES} ${TRAIN_SET:-} \
        --run-dir "/tmp/gpu-train-$run" 2>&1 | grep -v "torchrl\]\[INFO" >"$OUT/train-$run.log"
      cp "/tmp/gpu-train-$run/eval.json" "$OUT/eval-$run.json" 2>/dev/null
      tail -30 "$OUT/train-$run.log" ;;
    *) echo "unknown stage $s"; exit 2 ;;
  esac
done
