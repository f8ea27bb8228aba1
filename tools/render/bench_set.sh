#!/usr/bin/env bash
# The dice reader's per-factor bench set: scenes rendered by dice_scenes.py into one folder, each
# group forcing one factor (the other parts random from the seed), test seeds 3000 and up (apart
# from every seed rendered for training, 500000 and up). Then:
#   companion bench dice DIR --split test      # every figure, and each one per factor
# Usage: tools/render/bench_set.sh DIR [SCENES_PER_GROUP [FIRST_SEED]]   (~50 s a scene on one core
# here; FIRST_SEED other than 3000 renders a fresh set of the same groups, for measuring once)
set -euo pipefail
out=${1:?usage: bench_set.sh DIR [SCENES_PER_GROUP [FIRST_SEED]]}
n=${2:-5}
seed=${3:-3000}
group() {  # a group of scenes forcing the given factors, from its own seeds
  blender -b --factory-startup -noaudio -P "$(dirname "$0")/dice_scenes.py" -- --out "$out" --seed "$seed" \
    --count "$n" --split test --threads 1 --resume --factors "$@" > /dev/null
  seed=$((seed + 100))
}
for cloth in speckle print wood felt tray cardboard plain; do group cloth=$cloth; done
for light in warm cool dim two spot; do group light=$light; done
group tilt=25-40
group clutter=heavy
group touching=1
group cast=1
group kind=translucent
group markers=1
echo "rendered $(ls "$out/images" | wc -l) scenes into $out"
