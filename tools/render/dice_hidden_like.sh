#!/usr/bin/env bash
# Dice scenes drawn to issue 22's description of the hidden sets, each group its own seed block
# (SEED, SEED+100, ...): white dice on wood with heavy clutter (the webcam's), felt trays, speckled
# cloths, coloured dice touching on wood and on felt at a tilt of up to 30 degrees (the renders'),
# dice of 25-70 px; then felt trays on a speckled carpet in a wide 1280 x 960 view (the phone
# photos'). Then:
#   companion bench dice DIR --split test
# Usage: tools/render/dice_hidden_like.sh DIR SEED [PER_GROUP]   (~15-30 s a scene on one core here,
# a tray on a carpet ~2 min). The sets models/dice-reader.md reports on:
#   validation: /tmp/dv/hl (SEED 41000, 4 a group) and /tmp/dv/hl2 (42000, 6), their first five groups;
#     /tmp/dv/tc, the last group's 8 scenes from seed 44100
#   test, read once: /tmp/dv/T_hl (61000, 4, the first five groups) and /tmp/dv/T_tc (the last, 6 from 61500)
set -euo pipefail
out=${1:?usage: dice_hidden_like.sh DIR SEED [PER_GROUP]}
seed=${2:?first seed}
n=${3:-4}
here="$(dirname "$0")"
group() {  # [--width W --height H] -- KEY=VALUE ...
  local size=()
  if [ "$1" = "--wide" ]; then size=(--width 1280 --height 960); shift; fi
  nice -n 10 blender -b --factory-startup -noaudio -P "$here/dice_scenes.py" -- --out "$out" --seed "$seed" \
    --count "$n" --split test --threads 1 --resume "${size[@]}" --factors "$@" > /dev/null
  seed=$((seed + 100))
}
group color=white cloth=wood clutter=heavy px=35-70
group cloth=tray px=25-40
group cloth=speckle px=25-45
group cloth=wood tilt=0-30 px=25-60 touching=1
group cloth=felt tilt=0-30 px=25-60
group --wide cloth=tray outer=speckle tray=0.3-0.6 px=26-40 dice=4-12
echo "rendered $(ls "$out/images" | wc -l) scenes into $out"
