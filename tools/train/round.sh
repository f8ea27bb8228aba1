#!/usr/bin/env bash
# One training round of both dice networks (models/dice-reader.md, "Training"): the finder from
# scratch on photos, drawn dice and drawn tables of every cloth and clutter, then the reader from
# scratch with that finder's false finds. Runs where torch is (a GPU machine: DEVICE=cuda), from
# the repository root; the ONNX files land in OUT. Time budgets, not step counts, so that a
# shared or slower machine still finishes: the steps each net took are printed, and
# `--steps N` in place of `--minutes` repeats a run on any machine.
#   OUT=/tmp/round DEVICE=cuda WORKERS=14 tools/train/round.sh
set -euo pipefail
out=${OUT:-/tmp/round}
device=${DEVICE:-cpu}
workers=${WORKERS:-2}
py=${PYTHON:-python3}
mkdir -p "$out"
export PYTHONPATH=.
"$py" -m tools.train.train_dice finder --minutes "${FINDER_MINUTES:-4}" --batch "${FINDER_BATCH:-48}" \
  --scenes "${SCENES:-0.5}" --seed 101 --device "$device" --workers "$workers" \
  --save "$out/finder.pt" --out "$out"
"$py" -m tools.train.train_dice reader --minutes "${READER_MINUTES:-3}" --seed 111 --crop 48 --crop-scale 1.25 \
  --photometric 1.0 --glare 0.3 --tables "${TABLES:-60}" --poor-native 0.15 --scene-bank "${SCENE_BANK:-3000}" \
  --hard-negatives "$out/dice-finder.onnx" --device "$device" --workers "$workers" \
  --save "$out/reader.pt" --out "$out"
