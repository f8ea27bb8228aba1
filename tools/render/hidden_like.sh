#!/usr/bin/env bash
# Cup tables drawn to issue 21's description of the hidden ones (solid cups coloured inside and
# out, a metal silver cup, rims 95-111 mm, 120 mm tall, a 1.6-1.7 m table, the camera 0.9-1.1 m
# up and tilted 1-30 degrees, 1280 x 720), rendered by cup_scenes.py in four seed blocks of one
# cloth and light each: SEED wood + lamp, SEED+100 mat + window, SEED+200 wood + window, SEED+300
# mat + lamp, two blocks at a time (one per core). Then:
#   companion bench tables --scenes DIR          # stills
#   companion bench cups --sequences DIR         # --sequence: the live watch, calibrated from frame 0
# Usage: tools/render/hidden_like.sh DIR SEED SPLIT [PER_BLOCK [--sequence [--throws N]] [KEY=VALUE ...]]
# The sets models/cup-judge.md reports on (~1 min a render a core here):
#   hidden_like.sh /tmp/cups_hl_val 91000 val 6 stage=game        hidden_like.sh /tmp/cups_hl_test 92000 test 6 stage=game
#   hidden_like.sh /tmp/cups_hlseq_val 96000 val 2 --sequence      hidden_like.sh /tmp/cups_hlseq_test 97000 test 2 --sequence
#   hidden_like.sh /tmp/cups_hlseq_valT 96400 val 2 --sequence event=turned
#   hidden_like.sh /tmp/cups_hlseq_valT2 95400 val 3 --sequence event=turned   hidden_like.sh /tmp/cups_hlseq_valM 95800 val 2 --sequence event=miss
#   hidden_like.sh /tmp/cups_hlseq_testT 97400 test 2 --sequence event=turned
#   hidden_like.sh /tmp/cups_hlseq_valT3 98400 val 2 --sequence event=turned tilt=20-30
#   hidden_like.sh /tmp/cups_hlgame_val 94400 val 1 --sequence --throws 3    (4 short games of 3 throws)
set -euo pipefail
out=${1:?usage: hidden_like.sh DIR SEED SPLIT [PER_BLOCK [--sequence] [KEY=VALUE ...]]}
seed=${2:?first seed}
split=${3:?val or test}
n=${4:-6}
shift $(( $# < 4 ? $# : 4 ))
sequence=()
if [ "${1:-}" = "--sequence" ]; then sequence=(--sequence); shift; fi
here="$(dirname "$0")"
block() {  # SEED CLOTH LIGHT [KEY=VALUE ...]
  local s=$1 c=$2 l=$3
  shift 3
  nice -n 10 blender -b --factory-startup -noaudio -P "$here/cup_scenes.py" -- --out "$out" --seed "$s" \
    --count "$n" --split "$split" --threads 1 --resume "${sequence[@]}" --factors make=solid silver=metal \
    rim=95-111 cup_h=118-122 table=1.6-1.7 height=0.9-1.1 tilt=1-30 cloth="$c" light="$l" "$@" > /dev/null
}
block "$seed" wood overhead "$@" & block $((seed + 100)) mat window "$@" & wait
block $((seed + 200)) wood window "$@" & block $((seed + 300)) mat overhead "$@" & wait
echo "rendered $(ls "$out/images" | wc -l) images into $out"
