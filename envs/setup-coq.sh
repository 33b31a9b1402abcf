#!/usr/bin/env bash
# `make setup-coq` (and so `make run`): the proof checker the bundled default's theorem and
# open-conjecture items need (coqc and coqchk, Coq 8.16 for the bundled tasks). Coq is not on PyPI,
# so it comes from one of, in this order:
#   1. the machine: coqc and coqchk already on PATH;
#   2. the system's package manager (apt-get, dnf, zypper or pacman), run as root or through
#      passwordless sudo; the command is printed before it runs;
#   3. a Docker engine: the candidate image (`make candidate-image`) carries Coq, and the proof
#      jobs' sandbox `auto` then checks proofs in it.
# SYSTEM_PACKAGES=no (make setup-coq SYSTEM_PACKAGES=no, or TCSEXAM_SYSTEM_PACKAGES=no) refuses 2.
# Where none works this prints what follows and the one command that fixes it, and exits 0: the
# run still judges every other item and writes index.json incomplete (docs/proofs.md).
set -uo pipefail

say() { echo "setup-coq: $*"; }
# Coq is here when both programs run (not merely when a file of that name is on PATH)
have_coq() { coqc --print-version >/dev/null 2>&1 && coqchk --version >/dev/null 2>&1; }

if have_coq; then
    say "coqc $(coqc --print-version 2>/dev/null | cut -d' ' -f1) ($(command -v coqc))"
    exit 0
fi

# the package manager and its install command
install=""
for pm in apt-get dnf zypper pacman; do
    command -v "$pm" >/dev/null 2>&1 || continue
    case "$pm" in
        apt-get) install="apt-get install -y --no-install-recommends coq" ;;
        dnf) install="dnf install -y coq" ;;
        zypper) install="zypper --non-interactive install coq" ;;
        pacman) install="pacman -S --noconfirm coq" ;;
    esac
    break
done

sudo=""
allowed="${TCSEXAM_SYSTEM_PACKAGES:-${SYSTEM_PACKAGES:-auto}}"
if [ -z "$install" ]; then
    why="no package manager this script knows (apt-get, dnf, zypper, pacman)"
elif [ "$allowed" = no ]; then
    why="installing system packages is refused (SYSTEM_PACKAGES=no)"
elif [ "$(id -u)" = 0 ]; then
    why=""
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    sudo="sudo -n "
    why=""
else
    why="not root and no passwordless sudo"
fi

if [ -z "$why" ]; then
    say "coqc is not installed; running: $sudo$install"
    # shellcheck disable=SC2086  # the command's words
    if ! $sudo$install; then
        if [ "${install%% *}" = apt-get ]; then
            say "running: ${sudo}apt-get update (the package lists may be empty)"
            ${sudo}apt-get update -qq && $sudo$install
        else
            false
        fi
    fi
    if have_coq; then
        say "installed coqc $(coqc --print-version 2>/dev/null | cut -d' ' -f1) ($(command -v coqc))"
        exit 0
    fi
    why="the package manager did not install it"
fi

# 3. a Docker engine: the candidate image has Coq
if command -v docker >/dev/null 2>&1 && docker info >/dev/null 2>&1; then
    image="${CANDIDATE_IMAGE:-tcsexam-candidate:latest}"
    if docker image inspect "$image" >/dev/null 2>&1 && docker run --rm "$image" coqc --print-version >/dev/null 2>&1; then
        say "coqc is not installed here ($why); proofs are checked in the Docker image $image, which has it"
        exit 0
    fi
    say "coqc is not installed here ($why); building the Docker candidate image with Coq: make candidate-image"
    if make --no-print-directory candidate-image CANDIDATE_IMAGE="$image"; then
        exit 0
    fi
fi

fix="${install:+sudo $install}"
fix="${fix:-install Coq 8.16 (coqc, coqchk) with the system package manager or opam}"
say "WARNING: coqc is not installed and cannot be installed here ($why)."
say "WARNING: the theorem and open-conjecture items cannot be judged: their rows are judge_failed and index.json incomplete."
say "WARNING: fix: $fix   (then run the same command again: only the proof jobs run)"
exit 0
