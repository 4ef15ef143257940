#!/usr/bin/env bash
# test_run_cli.sh: the `xferprof run` launcher itself (options, exit statuses, environment it sets up, signals), with no recording needed.
# Usage: test_run_cli.sh PATH/TO/xferprof
# A stand-in libxferprof.so (an empty shared object built here with $CC) is
# preloaded unless XFERPROF_PRELOAD_LIB names one, so this runs before the
# preload exists and never depends on what it records.
set -u

XP=${1:?usage: test_run_cli.sh PATH/TO/xferprof}
XP=$(cd "$(dirname "$XP")" && pwd)/$(basename "$XP")
[ -x "$XP" ] || { echo "not executable: $XP"; exit 1; }

T=$(mktemp -d "${TMPDIR:-/tmp}/xferprof-cli-test.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
cd "$T" || exit 1
# Leave out whatever the caller's environment would change.
unset XFERPROF_OUTPUT XFERPROF_STACK_DEPTH XFERPROF_QUIET XFERPROF_MANIFEST XFERPROF_SIM_DIR
unset XFERPROF_FINGERPRINT
unset LD_PRELOAD RANK LOCAL_RANK OMPI_COMM_WORLD_RANK SLURM_PROCID NVTX_INJECTION64_PATH

failures=0
checks=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# x ARGS...: runs xferprof, leaving rc, out (stdout) and err (stderr).
x() {
  "$XP" "$@" >"$T/out" 2>"$T/err" </dev/null
  rc=$?
  out=$(cat "$T/out")
  err=$(cat "$T/err")
}
# expect_rc WANT WHAT
expect_rc() {
  checks=$((checks + 1))
  [ "$rc" = "$1" ] || fail "$2: exit $rc, expected $1 (stderr: $err)"
}
# expect_in HAYSTACK NEEDLE WHAT
expect_in() {
  checks=$((checks + 1))
  case "$1" in *"$2"*) ;; *) fail "$3: '$2' not in: $1" ;; esac
}
expect_not_in() {
  checks=$((checks + 1))
  case "$1" in *"$2"*) fail "$3: '$2' unexpectedly in: $1" ;; esac
}
expect_eq() {
  checks=$((checks + 1))
  [ "$1" = "$2" ] || fail "$3: got '$1', expected '$2'"
}

# ---- stand-in preload and simulator folder ---------------------------------
CC=${CC:-cc}
if [ -n "${XFERPROF_PRELOAD_LIB:-}" ]; then
  PRELOAD=$XFERPROF_PRELOAD_LIB
else
  echo 'int xp_cli_test_stand_in;' >"$T/stub.c"
  $CC -shared -fPIC -o "$T/libstub.so" "$T/stub.c" || { echo "SKIP: cannot build a stand-in preload with $CC"; exit 77; }
  PRELOAD=$T/libstub.so
fi
PRELOAD=$(realpath "$PRELOAD")
export XFERPROF_PRELOAD_LIB=$PRELOAD
echo 'int xp_cli_test_other;' >"$T/other.c"
$CC -shared -fPIC -o "$T/libother.so" "$T/other.c" || { echo "SKIP: cannot build with $CC"; exit 77; }
mkdir -p "$T/sim"
: >"$T/sim/libcudart.so.13"
: >"$T/sim/libcuda.so.1"

# ---- top-level command --------------------------------------------------------
x --help
expect_rc 0 "xferprof --help"
expect_in "$out" "run" "xferprof --help lists run"
expect_in "$out" "recover" "xferprof --help lists recover"
x --version
expect_rc 0 "xferprof --version"
expect_in "$out" "0.1.0" "xferprof --version"
x
expect_rc 2 "xferprof with no command"
x frobnicate
expect_rc 2 "unknown command"
expect_in "$err" "xferprof: unknown command 'frobnicate'" "unknown command message"
expect_in "$err" "Usage:" "unknown command prints usage"

# ---- run --help -----------------------------------------------------------------
x run --help
expect_rc 0 "run --help"
for word in -o --output --stack-depth --fingerprint sampled full off --quiet -q --sim --help \
            XFERPROF_OUTPUT XFERPROF_STACK_DEPTH XFERPROF_FINGERPRINT XFERPROF_QUIET XFERPROF_MANIFEST \
            XFERPROF_PRELOAD_LIB XFERPROF_SIM_DIR %p %h %r %t RANK LOCAL_RANK \
            OMPI_COMM_WORLD_RANK SLURM_PROCID; do
  expect_in "$out" "$word" "run --help documents $word"
done
x help run
expect_rc 0 "xferprof help run"
expect_in "$out" "--stack-depth" "xferprof help run"

# ---- bad usage --------------------------------------------------------------------
x run --bogus -- true
expect_rc 2 "unknown long option"
expect_in "$err" "xferprof run: unknown option '--bogus' (see 'xferprof run --help')" "unknown long option message"
expect_eq "$out" "" "unknown option prints nothing on stdout"
x run -Z true
expect_rc 2 "unknown short option"
expect_in "$err" "unknown option '-Z'" "unknown short option message"
for args in "run" "run --" "run -q" "run -o x.db --"; do
  # shellcheck disable=SC2086
  x $args
  expect_rc 2 "missing command ($args)"
  expect_in "$err" "no command given" "missing command message ($args)"
done
x run -o
expect_rc 2 "-o without a value"
expect_in "$err" "needs a value" "-o without a value message"
for bad in abc -1 257 12x ""; do
  x run --stack-depth "$bad" -- true
  expect_rc 2 "--stack-depth '$bad'"
  expect_in "$err" "xferprof run: --stack-depth: '$bad' is not an integer from 0 to 256" "--stack-depth '$bad' message"
done
for bad in bogus Full on ""; do
  x run --fingerprint="$bad" -- true
  expect_rc 2 "--fingerprint='$bad'"
  expect_in "$err" "xferprof run: --fingerprint: '$bad' is not off, sampled or full" "--fingerprint='$bad' message"
done
x run --fingerprint -- true
expect_rc 2 "--fingerprint needs a mode (it took '--' as one)"
XFERPROF_FINGERPRINT=maybe x run -- true
expect_rc 2 "malformed inherited XFERPROF_FINGERPRINT"
expect_in "$err" "XFERPROF_FINGERPRINT" "malformed inherited XFERPROF_FINGERPRINT message"
x run -o 'run-%q.db' -- true
expect_rc 2 "unknown pattern in -o"
expect_in "$err" "xferprof: bad output pattern 'run-%q.db'" "unknown pattern message"
# A missing folder is made (capture_outdirs); an unwritable output is not
# the launcher's to refuse: the program runs unprofiled with its own status
# (the preload says why: capture_unwritable).
x run -o "/proc/no/such/dir/x.db" -- sh -c 'exit 5'
expect_rc 5 "-o into a folder that cannot be made runs the program"
XFERPROF_STACK_DEPTH=lots x run -- true
expect_rc 2 "malformed inherited XFERPROF_STACK_DEPTH"
expect_in "$err" "XFERPROF_STACK_DEPTH" "malformed inherited XFERPROF_STACK_DEPTH message"

# ---- exit statuses ----------------------------------------------------------------
x run -- true
expect_rc 0 "run -- true"
expect_in "$err" "xferprof: no CUDA activity recorded" "no manifest line"
x run -q -- true
expect_rc 0 "run -q -- true"
expect_eq "$err" "" "--quiet prints nothing"
x run -- false
expect_rc 1 "run -- false"
x run -- sh -c 'exit 7'
expect_rc 7 "run -- sh -c 'exit 7'"
x run -- sh -c 'kill -TERM $$'
expect_rc 143 "command killed by SIGTERM"
x run -- sh -c 'kill -KILL $$'
expect_rc 137 "command killed by SIGKILL"
x run -- nope
expect_rc 127 "nonexistent command"
expect_eq "$err" "xferprof: cannot run 'nope': No such file or directory" "nonexistent command message"
: >"$T/notexec"
chmod 644 "$T/notexec"
x run -- "$T/notexec"
expect_rc 126 "non-executable command"
expect_in "$err" "xferprof: cannot run" "non-executable command message"
# Options after CMD are CMD's, even without "--".
x run sh -c 'exit 3' --quiet
expect_rc 3 "CMD's own options left alone"

# ---- the child's stdin, stdout, stderr are ours -------------------------------
got=$(echo piped | "$XP" run -q -- cat 2>/dev/null)
expect_eq "$got" "piped" "stdin and stdout pass through"
got=$("$XP" run -q -- sh -c 'echo to-stderr >&2' 2>&1 >/dev/null)
expect_eq "$got" "to-stderr" "stderr passes through"

# ---- environment set up for the child -----------------------------------------
x run -q -- sh -c 'echo "$LD_PRELOAD"'
expect_eq "$out" "$PRELOAD" "LD_PRELOAD without an existing one"
LD_PRELOAD=$T/libother.so x run -q -- sh -c 'echo "$LD_PRELOAD"'
expect_eq "$out" "$PRELOAD:$T/libother.so" "LD_PRELOAD prepended to the existing one"

# NVTX ranges: the preload is NVTX's injection library, unless the user named another.
x run -- sh -c 'echo "$NVTX_INJECTION64_PATH"'
expect_eq "$out" "$PRELOAD" "NVTX_INJECTION64_PATH set to the preload"
NVTX_INJECTION64_PATH=$T/libother.so x run -- sh -c 'echo "$NVTX_INJECTION64_PATH"'
expect_eq "$out" "$T/libother.so" "another NVTX_INJECTION64_PATH kept"
expect_eq "$(grep -c 'NVTX_INJECTION64_PATH' "$T/err")" 1 "one warning about another NVTX tool"
NVTX_INJECTION64_PATH=$T/libother.so x run -q -- true
expect_eq "$(cat "$T/err")" "" "no NVTX warning with -q"

x run -q -o 'out-%p.db' -- sh -c 'echo "$XFERPROF_OUTPUT"'
expect_eq "$out" "$T/out-%p.db" "relative -o made absolute in XFERPROF_OUTPUT"
x run -q --output "$T/abs-%h-%r-%t.db" -- sh -c 'echo "$XFERPROF_OUTPUT"'
expect_eq "$out" "$T/abs-%h-%r-%t.db" "absolute --output passed as XFERPROF_OUTPUT"
XFERPROF_OUTPUT=$T/env-%p.db x run -q -- sh -c 'echo "$XFERPROF_OUTPUT"'
expect_eq "$out" "$T/env-%p.db" "inherited XFERPROF_OUTPUT kept"
XFERPROF_OUTPUT=$T/env-%p.db x run -q -o "$T/opt.db" -- sh -c 'echo "$XFERPROF_OUTPUT"'
expect_eq "$out" "$T/opt.db" "-o overrides XFERPROF_OUTPUT"
x run -q -- sh -c 'echo "$XFERPROF_OUTPUT"'
expect_eq "$out" "$T/xferprof-%h-%p.db" "default output in the current directory"

x run --stack-depth 0 -q -- sh -c 'echo "$XFERPROF_STACK_DEPTH"'
expect_eq "$out" "0" "--stack-depth 0 as XFERPROF_STACK_DEPTH"
x run --stack-depth=256 -q -- sh -c 'echo "$XFERPROF_STACK_DEPTH"'
expect_eq "$out" "256" "--stack-depth=256 as XFERPROF_STACK_DEPTH"
for mode in off sampled full; do
  x run --fingerprint "$mode" -q -- sh -c 'echo "$XFERPROF_FINGERPRINT"'
  expect_eq "$out" "$mode" "--fingerprint $mode as XFERPROF_FINGERPRINT"
done
x run -q -- sh -c 'echo "${XFERPROF_FINGERPRINT:-unset}"'
expect_eq "$out" "unset" "no XFERPROF_FINGERPRINT without --fingerprint"
x run --quiet -- sh -c 'echo "${XFERPROF_QUIET:-unset}"'
expect_eq "$out" "1" "--quiet as XFERPROF_QUIET=1"
x run -- sh -c 'echo "${XFERPROF_QUIET:-unset}"'
expect_eq "$out" "unset" "no XFERPROF_QUIET without --quiet"

# The manifest: a file that exists while CMD runs and is gone afterwards.
x run -q -- sh -c 'test -f "$XFERPROF_MANIFEST" && test ! -s "$XFERPROF_MANIFEST" && echo "$XFERPROF_MANIFEST"'
expect_rc 0 "XFERPROF_MANIFEST names an empty file"
checks=$((checks + 1))
[ -n "$out" ] && [ ! -e "$out" ] || fail "manifest '$out' left behind"
TMPDIR=$T x run -q -- sh -c 'echo "$XFERPROF_MANIFEST"'
expect_in "$out" "$T/" "manifest created in TMPDIR"

# A database named in the manifest is reported on (here one that is missing);
# CMD's exit status is still what comes back.
x run -- sh -c 'echo "$$ $PPID '"$T"'/none.db" >>"$XFERPROF_MANIFEST"; exit 4'
expect_rc 4 "exit status with a manifest line"
expect_in "$err" "none.db" "manifest line reported"
expect_not_in "$err" "no CUDA activity" "manifest line means activity"

# --sim: the simulator folder first in LD_LIBRARY_PATH.
XFERPROF_SIM_DIR=$T/sim x run -q --sim -- sh -c 'echo "$LD_LIBRARY_PATH"'
expect_eq "$out" "$T/sim" "--sim without an existing LD_LIBRARY_PATH"
XFERPROF_SIM_DIR=$T/sim LD_LIBRARY_PATH=/opt/a:/opt/b x run -q --sim -- sh -c 'echo "$LD_LIBRARY_PATH"'
expect_eq "$out" "$T/sim:/opt/a:/opt/b" "--sim prepends to LD_LIBRARY_PATH"
LD_LIBRARY_PATH=/opt/a x run -q -- sh -c 'echo "$LD_LIBRARY_PATH"'
expect_eq "$out" "/opt/a" "LD_LIBRARY_PATH untouched without --sim"
XFERPROF_SIM_DIR=$T x run -q --sim -- true
expect_rc 125 "--sim with a folder that is not the simulator"
expect_in "$err" "XFERPROF_SIM_DIR" "--sim with a bad folder names it"

# Without the override, the build tree's own libraries are found (or their
# absence is said clearly).
build_preload=$(dirname "$XP")/../hooks/libxferprof.so
if [ -f "$build_preload" ]; then
  XFERPROF_PRELOAD_LIB= x run -q -- sh -c 'echo "$LD_PRELOAD"'
  expect_eq "$out" "$(realpath "$build_preload")" "build tree's libxferprof.so found"
else
  XFERPROF_PRELOAD_LIB= x run -q -- true
  expect_rc 125 "no libxferprof.so to be found"
  expect_in "$err" "cannot find libxferprof.so" "no libxferprof.so message"
fi
if [ -f "$(dirname "$XP")/../sim/libcudart.so.13" ]; then
  x run -q --sim -- sh -c 'echo "$LD_LIBRARY_PATH"'
  expect_eq "$out" "$(realpath "$(dirname "$XP")/../sim")" "build tree's simulator found"
fi

# ---- signals are forwarded, and the launcher survives them ---------------------
# Job control on: otherwise bash starts background commands with SIGINT and
# SIGQUIT ignored, and an ignored signal is neither caught nor trappable.
set -m
# forward SIG: CMD traps SIG and exits 9 on it; the launcher must pass SIG on
# and come back with 9.
forward() {
  local sig=$1 ready=$T/ready-$1
  rm -f "$ready"
  "$XP" run -q -- sh -c 'trap "kill \$w 2>/dev/null; exit 9" '"$sig"'; sleep 20 & w=$!; : >"'"$ready"'"; wait' \
    >/dev/null 2>"$T/err" &
  local pid=$! i=0
  while [ ! -e "$ready" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
  kill -"$sig" $pid
  wait $pid
  rc=$?
  err=$(cat "$T/err")
  expect_rc 9 "SIG$sig forwarded to CMD"
}
forward TERM
forward HUP
forward INT
forward QUIT
set +m

echo "$checks checks, $failures failed"
[ "$failures" -eq 0 ]
