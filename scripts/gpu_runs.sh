#!/usr/bin/env bash
# Issue 26's GPU measurements in one command, for a lent GPU machine (or any CUDA machine):
#   scripts/gpu_runs.sh [tests] [replay] [arena] [fight] [train-NAME[:MINUTES[:CONFIG]]] [fused-NAME[:MINUTES[:CONFIG]]] ...
#   (default: tests replay arena)
# train-NAME: one `train --config CONFIG --device cuda` run named NAME (letters, digits, _); CONFIG defaults
#   to $CONFIG, else gpu; MINUTES to $MINUTES, else the config's own. Its time limit is its minutes plus
#   $TRAIN_EXTRA seconds (default 240: compiling, the last check and the final report), or $TRAIN_TIMEOUT
#   where set. $TRAIN_SET adds flags to every run, $SET_NAME to run NAME alone, both split into words at
#   spaces (e.g. SET_F1="--set train.final_games_level_9=200").
# fused-NAME: the same as train-NAME with `train --fused` (arena, replay and learner in one process).
# Stages joined by '+' run side by side (e.g. train-D1:2.5+train-F1:4:gpu-fight) and the next stage waits for all.
# learn: `bench learn --fused --device $DEV` (train against train --fused, the dodging game or $LEARN_GAME), one run
#   of each, $LEARN_MINUTES (default 1) minutes, a check every $LEARN_EVERY (0.25), $LEARN_FINAL (10) final episodes a level.
# smoke: a few chunks of the fused loop on the device (the captured learner included); if it fails, nothing else runs.
# fight: the fight arena's frames/s at $FIGHT_ENVS (default 4096,65536,262144), limited to $FIGHT_TIMEOUT s (480).
#   FIGHT_EAGER=1: op by op (no compile).
# Writes logs and JSON under $OUT (default ./gpu-out); exits 1 if any stage failed. $DEVICE (default cuda)
# allows a dry run elsewhere. Where the machine cannot reach PyPI, the packages it lacks travel as wheels in
# .whl/ (and py-ubjson's pure-Python source in .whl_src/).
# Inductor's compile cache goes back as $OUT/inductor-cache.tgz after every stage; copied to .inductor-cache.tgz
# and carried, it is unpacked before any stage runs, so a fresh machine need not compile every graph again.
set -u -o pipefail
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
PY=${PYTHON:-python3}
DEV=${DEVICE:-cuda}
stages=${*:-tests replay arena}
for s in $stages; do  # every stage is checked before any runs: a typo must not surface minutes in
  IFS=+ read -ra side <<<"$s"
  for p in "${side[@]}"; do
    case $p in
      smoke|tests|replay|arena|fight|learn) ;;
      train-*|fused-*) [[ ${p#*-} =~ ^[A-Za-z0-9_]+(:[0-9.]*(:[A-Za-z0-9_.-]+)?)?$ ]] || { echo "bad train stage $p"; exit 2; } ;;
      *) echo "unknown stage $p"; exit 2 ;;
    esac
  done
done
if [ -d .whl ]; then
  $PY -m pip install -q --no-index --no-deps --no-compile --upgrade --target /tmp/site .whl/*.whl || exit 1
  export PYTHONPATH=/tmp/site:$PWD/.whl_src:${PYTHONPATH:-}
fi
$PY -c "import melee_agent.manager" 2>/dev/null || \
  $PY -m pip install -q --no-index --no-deps --no-build-isolation -e . >"$OUT/install.log" 2>&1 || \
  { cat "$OUT/install.log"; exit 1; }
export TORCHINDUCTOR_CACHE_DIR=${TORCHINDUCTOR_CACHE_DIR:-/tmp/inductor-cache}
mkdir -p "$TORCHINDUCTOR_CACHE_DIR"
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null
  $PY -c "import torch; print('torch', torch.__version__, torch.cuda.get_device_name() if torch.cuda.is_available() else 'no CUDA', 'cuda', torch.version.cuda)"
  if [ -f .inductor-cache.tgz ] && tar xzf .inductor-cache.tgz -C "$TORCHINDUCTOR_CACHE_DIR"; then
    echo "inductor cache: warm, $(find "$TORCHINDUCTOR_CACHE_DIR" -type f | wc -l) files from .inductor-cache.tgz"
  else echo "inductor cache: cold (no .inductor-cache.tgz carried, or it did not unpack)"; fi
} | tee "$OUT/gpu.txt"

save_cache() {  # after every stage: a call cut off by its limit still brings back what compiled so far
  [ -n "${NO_CACHE:-}" ] && return  # nothing compiled (op-by-op runs): keep the call's few files for results
  local part=$OUT/inductor-cache.tgz.part size
  tar czf "$part" -C "$TORCHINDUCTOR_CACHE_DIR" . || { rm -f "$part"; return; }
  size=$(stat -c %s "$part")
  if [ "$size" -gt 16000000 ]; then  # the largest file a lent machine's call brings back is 16 MiB
    echo "inductor cache: $((size / 1000000)) MB packed, too large to bring back; not kept"; rm -f "$part"
  else mv "$part" "$OUT/inductor-cache.tgz"; fi
}

train() {  # train-NAME[:MINUTES[:CONFIG]] or fused-NAME[:MINUTES[:CONFIG]]
  local spec=${1#*-} run minutes config limit var extra rc fused=
  [[ $1 == fused-* ]] && fused=1
  IFS=: read -r run minutes config <<<"$spec"
  minutes=${minutes:-${MINUTES:-}}
  config=${config:-${CONFIG:-gpu}}
  limit=${TRAIN_TIMEOUT:-$($PY -c "import sys; from melee_agent.config import load_config
m = float(sys.argv[1]) if sys.argv[1] else load_config(sys.argv[2]).train.minutes
print(int(m * 60) + int(sys.argv[3]))" "$minutes" "$config" "${TRAIN_EXTRA:-240}")} || return 1
  var=SET_$run
  extra=${!var:-}
  rm -rf "/tmp/gpu-train-$run" "$OUT/eval-$run.json"  # a rerun on the same machine must not pass off the last one's
  echo "--- train ${fused:+--fused }$run: config $config, ${minutes:-its own} minutes, limit ${limit}s $extra $(date +%T)"
  # shellcheck disable=SC2086
  timeout "$limit" $PY -m melee_agent.cli train ${fused:+--fused} --config "$config" --device "$DEV" --no-progress ${minutes:+--minutes $minutes} \
    ${TRAIN_SET:-} $extra --run-dir "/tmp/gpu-train-$run" 2>&1 | grep --line-buffered -v "torchrl\]\[INFO" >"$OUT/train-$run.log"
  rc=${PIPESTATUS[0]}
  cp "/tmp/gpu-train-$run/eval.json" "$OUT/eval-$run.json" 2>/dev/null
  echo "--- train $run ended $(date +%T) (exit $rc$([ "$rc" = 124 ] && echo ': its time limit'))"; tail -30 "$OUT/train-$run.log"
  return "$rc"
}

stage() {
  case $1 in
    smoke)
      timeout 120 $PY - <<'PYEOF' 2>&1 | tee "$OUT/smoke.log"
import os, tempfile, time
import torch
from melee_agent.config import load_config
from melee_agent.run.fused import FusedTrainer
t = time.perf_counter()
cfg = load_config("small", ["manager.burn_in=500", "fused.envs=1024", "fused.replay_ratio=1"])
dev = os.environ.get("DEVICE", "cuda")
f = FusedTrainer(cfg, tempfile.mkdtemp(), device=dev, seed=0)
f.work(0.0, chunks=20)
if dev == "cuda":
    torch.cuda.synchronize()
print("smoke: (steps, rows, version)", f.progress(), "captured", f.learner.captured, f"{time.perf_counter() - t:.1f} s")
assert f.learner.train_steps > 0 and (f.learner.captured or dev != "cuda")
f.stop()
PYEOF
      ;;
    tests)
      timeout 150 $PY -m pytest -q -x -p no:cacheprovider tests/rl/test_captured_step.py tests/rl/test_learner.py \
        tests/rl/test_replay.py tests/rl/test_prioritized.py 2>&1 | tee "$OUT/tests.log" | tail -15 ;;
    replay)
      timeout 380 $PY -m melee_agent.cli bench replay --device "$DEV" --json "$OUT/bench-replay-cuda.json" \
        2>&1 | tee "$OUT/bench-replay.log" | tail -45 ;;
    arena)
      timeout 250 $PY -m melee_agent.cli bench arena --device "$DEV" --seconds 2 ${ARENA_ENVS:+--envs $ARENA_ENVS} --json "$OUT/bench-arena-cuda.json" \
        2>&1 | tee "$OUT/bench-arena.log" | tail -12 ;;
    fight)
      timeout "${FIGHT_TIMEOUT:-480}" $PY -m melee_agent.cli bench arena --device "$DEV" --game fight ${FIGHT_EAGER:+--eager} \
        --envs "${FIGHT_ENVS:-4096,65536,262144}" ${FIGHT_SECONDS:+--seconds $FIGHT_SECONDS} \
        --json "$OUT/bench-arena-fight-cuda.json" 2>&1 | tee "$OUT/bench-arena-fight.log" | tail -16 ;;
    learn)
      timeout "${LEARN_TIMEOUT:-420}" $PY -m melee_agent.cli bench learn --fused --device "$DEV" --game "${LEARN_GAME:-dodge}" \
        --runs 1 --minutes "${LEARN_MINUTES:-1}" --eval-every "${LEARN_EVERY:-0.25}" --final-episodes "${LEARN_FINAL:-10}" \
        --run-dir /tmp/bench-learn --json "$OUT/bench-learn-fused-cuda.json" 2>&1 | grep --line-buffered -v "torchrl\]\[INFO" \
        >"$OUT/bench-learn.log"
      local rc=${PIPESTATUS[0]}; tail -20 "$OUT/bench-learn.log"; return "$rc" ;;
    train-*|fused-*) train "$1" ;;
  esac
}

failed=0
for s in $stages; do
  echo "=== $s ($(date +%T))"
  IFS=+ read -ra side <<<"$s"
  if [ ${#side[@]} -eq 1 ]; then
    stage "$s" || failed=1
    [ "$s" = smoke ] && [ $failed = 1 ] && { echo "smoke failed: nothing else runs"; exit 1; }
  else
    pids=()
    for p in "${side[@]}"; do stage "$p" >"/tmp/stage-${p//[^A-Za-z0-9._-]/_}.txt" 2>&1 & pids+=($!); done
    for pid in "${pids[@]}"; do wait "$pid" || failed=1; done
    for p in "${side[@]}"; do cat "/tmp/stage-${p//[^A-Za-z0-9._-]/_}.txt"; done
  fi
  save_cache
done
exit $failed
