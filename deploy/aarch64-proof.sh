#!/usr/bin/env bash
# The install and the readers on aarch64 without a Pi (issue 25): an arm64 Debian Bookworm root
# run under QEMU user emulation, compared with this machine (x86_64).
#
#   deploy/aarch64-proof.sh [--cache DIR] [--ref REF] [--mirror URL] [--new-root] [--x86-python PY]
#                           [--root DIR] [--pip-cache DIR] [--cpus "cortex-a72 cortex-a76 cortex-a53"]
#
# DIR: $COMPANION_AARCH64_CACHE, else ~/.cache/companion-aarch64; --root and --pip-cache put the
# arm64 root (DIR/root) and pip's cache (DIR/pip-cache) elsewhere.
#
# Needs qemu-aarch64-static, debootstrap and dpkg-deb (Debian: apt-get install qemu-user-static
# debootstrap), git, and PyPI and a Debian mirror reachable. No binfmt_misc, no chroot, no root
# (except for debootstrap, once): every arm64 program is started as
# `qemu-aarch64-static -L ROOT ...`, which looks up absolute paths in ROOT first.
#
#  1. ROOT (cached in DIR/root; --new-root makes it again): `debootstrap --foreign --arch=arm64`
#     of Bookworm (the Debian that Raspberry Pi OS Bookworm is built on), with python3,
#     python3-venv, python3-pip and python3-numpy (what python3-picamera2 brings on a Pi), the
#     .debs unpacked with dpkg-deb. debootstrap's second stage is not run: it executes arm64
#     programs through the kernel, which needs a binfmt_misc handler (see docs/pi.md).
#  2. A release as deploy/install.sh builds it, in DIR/arm64: `git archive REF` as src (HEAD by
#     default: other people's uncommitted work stays out), a venv with the system site-packages,
#     `pip install --upgrade pip`, `pip install -e src[pi]`, compileall, and install.sh's own
#     smoke() (--version, the smoke game's score, a dice read). The venv's interpreter is a
#     two-line script that starts ROOT's arm64 python3.11 under QEMU, so pip, its build
#     subprocesses and the `companion` script run arm64 code, and pip picks wheels by the tags
#     an aarch64 Python reports: the log shows which it took and that none was built from source.
#  3. The same src in an x86_64 venv (DIR/x86), with the versions the arm64 pip chose.
#  4. `companion replay`, `companion dice --json` and `companion cups --json` on logs and photos
#     from the repository, on x86_64 and on each emulated CPU (--cpus: QEMU's models of the Pi 4's
#     Cortex-A72, the Pi 5's A76 and the Pi 3B+'s and Zero 2 W's A53, not QEMU's default "max",
#     which offers instructions no Pi has; a wheel that needed one would stop with SIGILL),
#     compared by deploy/aarch64_compare.py: identical, or the same
#     answers (every value, colour, side, count and score equal; centres a fraction of a pixel
#     apart, objects of equal score in another order), or DIFFERENT (exit status 1). Wall-clock
#     seconds of each and the readers' own milliseconds, both sides.
#
# Output: DIR/out/report.md (the summary; docs/pi.md quotes one), pip-install.log, wheels.tsv,
# and each command's output per machine in DIR/out/{x86_64,aarch64-CPU}/. A second run reuses
# ROOT and pip's cache in DIR/pip-cache, and builds both venvs anew.
set -euo pipefail

REPO=$(cd "$(dirname "$0")/.." && pwd)
CACHE=${COMPANION_AARCH64_CACHE:-$HOME/.cache/companion-aarch64}
REF=HEAD
MIRROR=http://deb.debian.org/debian
SUITE=bookworm
NEW_ROOT=0
ROOT=""
PIP_CACHE=""
X86_PYTHON=/usr/bin/python3    # Debian's: the same CPython 3.11.2 as the arm64 root's
ROOT_PACKAGES=python3,python3-venv,python3-pip,python3-numpy
QEMU=qemu-aarch64-static
CPUS="cortex-a72 cortex-a76 cortex-a53"   # Pi 4 (the pip step runs on the first), Pi 5, Pi 3B+
CPU=cortex-a72                            # the model clean_env hands to QEMU (QEMU_CPU)

usage() { sed -n '2,37p' "$0" | sed 's/^# \{0,1\}//'; }
say() { printf '\n== %s\n' "$*"; }
die() { printf 'aarch64-proof.sh: %s\n' "$*" >&2; exit 2; }

while [ $# -gt 0 ]; do
    case "$1" in
        --cache) CACHE=${2:?--cache needs a folder}; shift 2 ;;
        --ref) REF=${2:?--ref needs a commit}; shift 2 ;;
        --mirror) MIRROR=${2:?--mirror needs a URL}; shift 2 ;;
        --new-root) NEW_ROOT=1; shift ;;
        --root) ROOT=${2:?--root needs a folder}; shift 2 ;;
        --pip-cache) PIP_CACHE=${2:?--pip-cache needs a folder}; shift 2 ;;
        --cpus) CPUS=$(echo "${2:?--cpus needs QEMU CPU models}" | tr ',' ' '); shift 2 ;;
        --x86-python) X86_PYTHON=${2:?--x86-python needs a python}; shift 2 ;;
        -h|--help) usage; exit 0 ;;
        *) die "unknown option '$1' (try --help)" ;;
    esac
done

for tool in "$QEMU" debootstrap dpkg-deb git; do
    command -v "$tool" >/dev/null 2>&1 \
        || die "$tool is missing (Debian: apt-get install qemu-user-static debootstrap git)"
done
QEMU=$(command -v "$QEMU")
mkdir -p "$CACHE"
CACHE=$(cd "$CACHE" && pwd)
ROOT=${ROOT:-$CACHE/root}
mkdir -p "$(dirname "$ROOT")"
ROOT=$(cd "$(dirname "$ROOT")" && pwd)/$(basename "$ROOT")
ARM=$CACHE/arm64
X86=$CACHE/x86
OUT=$CACHE/out
RUN=$CACHE/run             # the commands' working folder: empty, so no ./companion.toml or ./data
SHOME=$CACHE/home          # HOME for every command: no one's ~/.config
PIP_CACHE_DIR=${PIP_CACHE:-$CACHE/pip-cache}
mkdir -p "$PIP_CACHE_DIR"
PIP_CACHE_DIR=$(cd "$PIP_CACHE_DIR" && pwd)

# A clean environment for both sides: no PIP_* or PYTHON* of the caller, no pip configuration
# file of this machine (its local indexes hold x86 wheels only), the system's CA bundle.
clean_env() {
    local cert=()
    [ -f /etc/ssl/certs/ca-certificates.crt ] && cert=(PIP_CERT=/etc/ssl/certs/ca-certificates.crt)
    env -i PATH=/usr/bin:/bin HOME="$SHOME" LANG=C.UTF-8 QEMU_CPU="$CPU" PIP_CONFIG_FILE=/dev/null \
        PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_CACHE_DIR="$PIP_CACHE_DIR" "${cert[@]}" "$@"
}

# Seconds since the epoch, with fractions.
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }

# -- 1. the arm64 root -------------------------------------------------------------------------
make_root() {
    local tmp=$ROOT.new deb
    [ "$(id -u)" -eq 0 ] || die "debootstrap needs root to make $ROOT (once; later runs reuse it)"
    rm -rf "$tmp"
    say "arm64 Debian $SUITE root in $ROOT: debootstrap --foreign from $MIRROR"
    debootstrap --foreign --arch=arm64 --variant=minbase --include="$ROOT_PACKAGES" \
        "$SUITE" "$tmp" "$MIRROR" >"$CACHE/debootstrap.log" 2>&1 \
        || { tail -n 20 "$CACHE/debootstrap.log" >&2; die "debootstrap failed (log: $CACHE/debootstrap.log)"; }
    # The first stage unpacks only the essential packages; the rest waits in the archive cache
    # for a second stage that would run dpkg (arm64) in a chroot. Unpack them all instead: no
    # maintainer scripts run, which python3 and its libraries do not need to start.
    for deb in "$tmp"/var/cache/apt/archives/*.deb; do
        dpkg-deb -x "$deb" "$tmp" || die "cannot unpack $deb"
    done
    # Where site.py looks, present in the root, so that QEMU never falls back to this machine's.
    mkdir -p "$tmp/usr/local/lib/python3.11/dist-packages" "$tmp/usr/lib/python3.11/dist-packages"
    "$QEMU" -L "$tmp" "$tmp/usr/bin/python3.11" -c 'import platform, sys; assert platform.machine() == "aarch64"; print(sys.version)' \
        || die "the arm64 python3.11 does not start under $QEMU"
    {
        echo "suite=$SUITE arch=arm64 variant=minbase mirror=$MIRROR"
        echo "include=$ROOT_PACKAGES"
        echo "made=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
        find "$tmp/var/cache/apt/archives" -name '*.deb' -printf '%f\n' | sort | grep -E '^(python3|libpython3|libc6|libssl)[._-]'
    } >"$tmp/.companion-aarch64-root"
    rm -rf "$ROOT"
    mv "$tmp" "$ROOT"
}

# -- 2. an arm64 venv like install.sh's ---------------------------------------------------------
# $1: the venv. The arm64 interpreter: QEMU with argv[0] set to the venv's own path, so that
# Python finds pyvenv.cfg beside it, sys.executable is the venv's, and subprocesses (pip's build
# backends, venv/bin/companion's shebang) come back through this script.
arm64_venv() {
    local venv=$1
    rm -rf "$venv"
    # As `python3 -m venv --system-site-packages` does it: pip first, in a venv without the
    # system site-packages (else ensurepip finds Debian's pip there and installs none), then the
    # system site-packages switched on. --without-pip: venv would start its interpreter through
    # the kernel, which cannot run arm64.
    clean_env "$QEMU" -L "$ROOT" -0 /usr/bin/python3.11 "$ROOT/usr/bin/python3.11" -m venv --without-pip "$venv"
    rm -f "$venv/bin/python" "$venv/bin/python3" "$venv/bin/python3.11"
    cat >"$venv/bin/python3.11" <<EOF
#!/bin/sh
# arm64 Python 3.11 of $ROOT under QEMU user emulation (deploy/aarch64-proof.sh);
# QEMU_CPU picks the emulated CPU (a Pi 4's Cortex-A72 unless set)
exec "$QEMU" -cpu "\${QEMU_CPU:-cortex-a72}" -L "$ROOT" -0 "\$0" "$ROOT/usr/bin/python3.11" "\$@"
EOF
    chmod 0755 "$venv/bin/python3.11"
    ln -s python3.11 "$venv/bin/python3"
    ln -s python3.11 "$venv/bin/python"
    (cd "$venv" && clean_env VIRTUAL_ENV="$venv" "$venv/bin/python" -m ensurepip --upgrade --default-pip >/dev/null)
    sed -i 's/^include-system-site-packages = false$/include-system-site-packages = true/' "$venv/pyvenv.cfg"
    grep -q '^include-system-site-packages = true$' "$venv/pyvenv.cfg" || die "cannot switch on the system site-packages in $venv"
}

# The installed distributions of a venv (not the system's): name, version, wheel tags, how.
WHEELS_PY='
import importlib.metadata as md, json, sysconfig
for d in sorted(md.distributions(path=[sysconfig.get_paths()["purelib"]]), key=lambda d: d.metadata["Name"].lower()):
    wheel = d.read_text("WHEEL") or ""
    tags = ".".join(line.split(":", 1)[1].strip() for line in wheel.splitlines() if line.startswith("Tag:"))
    direct = json.loads(d.read_text("direct_url.json") or "{}")
    how = "editable" if direct.get("dir_info", {}).get("editable") else "wheel"
    print(d.metadata["Name"], d.version, tags or "-", how, sep="\t")
'

# -- 4. the commands ----------------------------------------------------------------------------
# name|arguments (paths relative to src). The longest log of each game's scenarios, the smoke
# game, dice photos of four kinds (the rendered example frame, two real photos of the byler set,
# a translucent casino die, a grey dice-cup crop), cups: two Blender tables and the example frame
# read by the network from their markers, by the colour search, and with the example calibration.
COMMANDS=(
    "replay-smoke|replay deploy/smoke-game.jsonl --compact"
    "replay-exact21|replay tests/scenarios/exact21/no-cups-left-then-silver-cups.jsonl --compact"
    "replay-exactly|replay tests/scenarios/exactly/X11-both-win-round-only-one-reaches-target.jsonl --compact"
    "replay-stack21|replay tests/scenarios/stack21/refusal-playing-out-and-win.jsonl --compact"
    "replay-twentyone|replay tests/scenarios/twentyone/seed-sheet-c-88.jsonl --compact"
    "dice|dice --json calibration/table.example-frame.jpg tests/data/dice/byler/images/IMG_20191208_111228.jpg tests/data/dice/byler/images/IMG_20191208_111328.jpg tests/data/dice/casino-crops/test/3/DJI_20241005231822_0125_D_detection_1.jpg tests/data/dice/tomitomi3-crops/5/00040.png"
    "cups|cups --json tests/data/cups-rendered/images/s000104.jpg tests/data/cups-rendered/images/s000105.jpg calibration/table.example-frame.jpg"
    "cups-colour-search|cups --json --colour-search tests/data/cups-rendered/images/s000104.jpg calibration/table.example-frame.jpg"
    "cups-calibrated|cups --json --calibration calibration/table.example.json calibration/table.example-frame.jpg"
)

# $1 arch label, $2 venv, $3 src: run every command, outputs to $OUT/$1/NAME.json, seconds to
# $OUT/$1/seconds.tsv.
run_commands() {
    local arch=$1 venv=$2 src=$3 entry name args word t0 t1 status
    local -a argv
    mkdir -p "$OUT/$arch"
    : >"$OUT/$arch/seconds.tsv"
    for entry in "${COMMANDS[@]}"; do
        name=${entry%%|*}
        args=${entry#*|}
        argv=()
        for word in $args; do
            case "$word" in
                -*|replay|dice|cups) argv+=("$word") ;;
                *) argv+=("$src/$word") ;;
            esac
        done
        t0=$(now)
        status=0
        (cd "$RUN" && clean_env "$venv/bin/companion" "${argv[@]}") >"$OUT/$arch/$name.json" 2>"$OUT/$arch/$name.err" || status=$?
        t1=$(now)
        printf '%s\t%s\t%s\n' "$name" "$(elapsed "$t0" "$t1")" "$status" >>"$OUT/$arch/seconds.tsv"
        printf '  %-20s %6s s  exit %s\n' "$name" "$(elapsed "$t0" "$t1")" "$status"
    done
}

main() {
    local sha t0 t1 pip_s status=0 cpu
    sha=$(git -C "$REPO" rev-parse --verify "$REF^{commit}") || die "no commit '$REF' in $REPO"
    if [ "$NEW_ROOT" -eq 1 ] || [ ! -f "$ROOT/.companion-aarch64-root" ]; then
        make_root
    else
        say "arm64 root: $ROOT (made $(sed -n 's/^made=//p' "$ROOT/.companion-aarch64-root"); --new-root to make it again)"
    fi
    rm -rf "$OUT" "$RUN" "$SHOME" "$ARM" "$X86"
    mkdir -p "$OUT" "$RUN" "$SHOME" "$ARM/src" "$X86"
    for cpu in $CPUS; do
        "$QEMU" -cpu "$cpu" -L "$ROOT" "$ROOT/usr/bin/python3.11" -c pass 2>/dev/null \
            || die "QEMU has no CPU model '$cpu' (qemu-aarch64-static -cpu help)"
    done
    CPU=${CPUS%% *}
    echo "qemu: $("$QEMU" --version | head -n 1); CPU models: $CPUS"

    say "release src: git archive $sha"
    git -C "$REPO" archive "$sha" | tar -x -C "$ARM/src"
    ln -s "$ARM/src" "$X86/src"

    say "arm64 venv, as install.sh makes it (all of it under emulation, -cpu $CPU)"
    t0=$(now)
    arm64_venv "$ARM/venv"
    {
        echo "\$ pip install --upgrade pip"
        clean_env "$ARM/venv/bin/pip" install --upgrade pip 2>&1
        echo "\$ pip install -e src[pi]"
        clean_env "$ARM/venv/bin/pip" install -e "$ARM/src[pi]" 2>&1
    } >"$OUT/pip-install.log" || { tail -n 30 "$OUT/pip-install.log" >&2; die "pip install under emulation failed (log: $OUT/pip-install.log)"; }
    clean_env "$ARM/venv/bin/python" -m compileall -q "$ARM/src/companion" >/dev/null || die "compileall failed under emulation"
    t1=$(now)
    pip_s=$(elapsed "$t0" "$t1")
    echo "venv, pip install and compileall: $pip_s s"
    grep -E '^ *(Downloading|Using cached|Building|Successfully installed)' "$OUT/pip-install.log" | sed 's/^/  /' || true

    say "what pip installed into the arm64 venv (name, version, wheel tags, how)"
    clean_env "$ARM/venv/bin/python" -c "$WHEELS_PY" >"$OUT/wheels.tsv"
    column -t -s "$(printf '\t')" "$OUT/wheels.tsv" | sed 's/^/  /'
    # A wheel pip built here from an sdist carries the plain linux_aarch64 tag (no manylinux);
    # pip says "Building wheel for NAME". Only the companion itself (editable) may be built.
    local built
    built=$(grep -E '^ *Building wheel for ' "$OUT/pip-install.log" | grep -v 'for companion ' || true)
    [ -z "$built" ] || { echo "$built" >&2; die "pip built a dependency from source under emulation"; }
    if awk -F '\t' '$4 == "wheel" && $3 ~ /(^|[-.])linux_aarch64/ && $3 !~ /manylinux/' "$OUT/wheels.tsv" | grep -q .; then
        die "a locally built (linux_aarch64) wheel is in the venv: $OUT/wheels.tsv"
    fi
    clean_env "$ARM/venv/bin/python" -m pip check | sed 's/^/  pip check: /'
    # Every runtime package imports, lgpio's C extension included (no GPIO chip here: gpiozero's
    # pins stay unproven, docs/pi.md).
    clean_env "$ARM/venv/bin/python" -c 'import platform, cv2, numpy, lgpio, gpiozero, flask, waitress, segno; print(f"  {platform.machine()} Python {platform.python_version()}, OpenCV {cv2.__version__}, numpy {numpy.__version__} ({numpy.__file__}); lgpio, gpiozero, flask, waitress, segno import")'

    say "install.sh's smoke check on the arm64 release"
    # shellcheck disable=SC1091
    (. "$ARM/src/deploy/install.sh" && smoke "$ARM") || die "install.sh's smoke check failed under emulation"

    say "x86_64 venv with the versions the arm64 pip chose"
    clean_env "$ARM/venv/bin/python" -m pip freeze --local --exclude-editable >"$OUT/constraints.txt"
    clean_env "$X86_PYTHON" -m venv "$X86/venv"
    clean_env "$X86/venv/bin/pip" install --quiet -c "$OUT/constraints.txt" -e "$X86/src" >"$OUT/pip-install-x86.log" 2>&1 \
        || { tail -n 30 "$OUT/pip-install-x86.log" >&2; die "pip install of the x86_64 venv failed"; }
    clean_env "$X86/venv/bin/python" -c 'import platform, cv2, numpy; print(f"  {platform.machine()} Python {platform.python_version()}, OpenCV {cv2.__version__}, numpy {numpy.__version__}")'

    say "the commands on x86_64 (this machine)"
    run_commands x86_64 "$X86/venv" "$X86/src"
    for cpu in $CPUS; do
        say "the commands on aarch64 (emulated, -cpu $cpu)"
        CPU=$cpu
        run_commands "aarch64-$cpu" "$ARM/venv" "$X86/src"
    done

    say "same answers?"
    clean_env "$X86/venv/bin/python" "$REPO/deploy/aarch64_compare.py" "$OUT" "$pip_s" \
        "$sha ($(git -C "$REPO" log -1 --format=%cs "$sha")), Python 3.11.2 both sides" \
        "$("$QEMU" --version | head -n 1); this machine: $(nproc) cores, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)" \
        || status=$?
    echo "report: $OUT/report.md"
    if [ "$status" -ne 0 ]; then
        echo "aarch64-proof.sh: the answers differ (or a command failed): diff -r $OUT/x86_64 $OUT/aarch64-CPU" >&2
        exit 1
    fi
    echo "aarch64-proof.sh: the same answers on aarch64 (emulated) as on x86_64"
}

main
