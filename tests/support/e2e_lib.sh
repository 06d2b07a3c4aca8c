# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash disable=SC2154
# Shell helpers of the end-to-end scripts that drive a program in the
# background (tests/app/run_e2e.sh, tests/obs/e2e.sh). Sourced, not run.
# The script sets, before it calls any of these:
#   case_name  the case it runs (named in failures)
#   program    what the background program is, as failures name it
#   out, err   the files its stdout and stderr go to
#   session    the tmux session a case may open
# and installs `trap cleanup EXIT`. `pid` is the running program's, or empty.
pid=""

cleanup() {
  [ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null
  tmux kill-session -t "$session" 2>/dev/null
  return 0
}

fail() {
  echo "FAIL ($case_name): $*"
  echo "--- $program stdout"; tail -40 "$out" 2>/dev/null
  echo "--- $program stderr"; tail -20 "$err" 2>/dev/null
  exit 1
}

# launch COMMAND...: runs it in the background into $out and $err, both
# emptied first so that no line of an earlier run is waited for.
launch() {
  : >"$out"
  : >"$err"
  "$@" >"$out" 2>"$err" &
  pid=$!
}

# wait_for_line REGEX SECONDS [FILE]: until a line of FILE ($out) matches;
# fails when the program exits first or the time is up.
wait_for_line() {
  local file=${3:-$out}
  for _ in $(seq $(($2 * 10))); do
    grep -qE "$1" "$file" && return 0
    kill -0 "$pid" 2>/dev/null || fail "$program exited before writing '$1'"
    sleep 0.1
  done
  fail "no '$1' within $2 s"
}

# metrics_url: the address on the program's line "metrics URL".
metrics_url() { sed -n 's/^metrics \(http[^ ]*\)$/\1/p' "$out"; }

# sum NAME FILE: the sum of a family's samples in an exposition; with
# labels (NAME{...}), the one sample written exactly so
sum() {
  case $1 in
  *'{'*) awk -v n="$1" '$1 == n { s += $NF } END { printf "%.0f", s }' "$2" ;;
  *) awk -v n="$1" '$1 ~ "^"n"({|$)" { s += $NF } END { printf "%.0f", s }' "$2" ;;
  esac
}

# finish [SIGNAL]: sends it (if given), waits for the program and returns
# its exit status.
finish() {
  [ -n "${1:-}" ] && kill -"$1" "$pid"
  local rc=0
  wait "$pid" || rc=$?
  pid=""
  return $rc
}

# second_sigint_exits_at_once: while a stop started by a first SIGINT is
# still under way, a second SIGINT ends the program within 2 s, with exit
# status 130 and a message on stderr that says so.
second_sigint_exits_at_once() {
  local t0 rc=0 ms
  t0=$(date +%s%N)
  finish INT || rc=$?
  ms=$((($(date +%s%N) - t0) / 1000000))
  echo "second SIGINT: exit $rc after $ms ms"
  [ $rc = 130 ] || fail "second SIGINT: exit status $rc, want 130"
  [ $ms -lt 2000 ] || fail "second SIGINT took $ms ms"
  grep -q "second interrupt" "$err" || fail "no message about the forced exit"
}
