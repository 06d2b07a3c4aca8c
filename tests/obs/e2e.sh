#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# End-to-end checks of a running persistent-kernel program (obs_runner, a
# stand-in for `gnio run` that can stall a block on purpose): metrics scraped
# with curl and checked by prometheus_client's parser, stop signals (a second
# SIGINT while a kernel that ignores its exit flag is waited for), the
# capability snapshot, and a hung block in `gnio top` under tmux. tests/app/run_e2e.sh checks the
# same against `gnio run packet-processing` itself.
# usage: e2e.sh CASE OBS_RUNNER GNIO WORKDIR
set -uo pipefail
case_name=$1 runner=$2 gnio=$3 work=$4
mkdir -p "$work"
out="$work/$case_name.out" err="$work/$case_name.err"
program=runner
session="gnio-top-$$"
. "$(dirname "$0")/../support/e2e_lib.sh"
trap cleanup EXIT
start() {  # start RUNNER-ARGS...: runs obs_runner in the background
  launch "$runner" "$@"
}
summary() { sed -n "s/.*summary:.* $1=\([0-9-]*\).*/\1/p" "$out"; }

case $case_name in
scrape)
  # A paced source, scraped while it runs and after it drained; the last
  # scrape must equal the run's own totals exactly.
  start --nic "synthetic:count=300000,size=64-512,pps=150000,seed=3,queues=2" --metrics 127.0.0.1:0 --linger --strides 4096
  wait_for_line '^metrics http' 10
  url=$(metrics_url)
  sleep 0.5
  curl -sf "$url" >"$work/early.prom" || fail "curl $url failed"
  sleep 0.5
  curl -sf "$url" >"$work/mid.prom" || fail "second curl failed"
  early=$(sum gnio_rx_packets_total "$work/early.prom") mid=$(sum gnio_rx_packets_total "$work/mid.prom")
  echo "while running: rx packets $early then $mid"
  [ "$early" -gt 0 ] && [ "$mid" -gt "$early" ] && [ "$mid" -lt 300000 ] || fail "counters did not grow while running ($early, $mid)"
  grep -q '^gnio_rx_packets_total{queue="1",gpu="cpu",backend="synthetic"} ' "$work/mid.prom" || fail "labels queue/gpu/backend missing"
  grep -q '^gnio_kernel_heartbeat_age_seconds{gpu="cpu",block="0"} ' "$work/mid.prom" || fail "block label missing"
  wait_for_line '^drained' 30
  curl -sf "$url" >"$work/final.prom" || fail "final curl failed"
  "$(dirname "$0")/../support/check_exposition.py" <"$work/final.prom" || fail "the exposition was rejected"
  finish INT || fail "runner exited with $? after SIGINT"
  for pair in "gnio_rx_packets_total delivered" "gnio_rx_offered_total offered" "gnio_kernel_packets_total kernel_packets" \
              "gnio_rx_bytes_total bytes" "gnio_rx_released_total released"; do
    set -- $pair
    got=$(sum "$1" "$work/final.prom") want=$(summary "$2")
    echo "$1 = $got, run total $2 = $want"
    [ "$got" = "$want" ] || fail "$1 scraped $got but the run counted $2=$want"
  done
  [ "$(summary offered)" = 300000 ] && [ $(($(summary delivered) + $(summary dropped))) = 300000 ] ||
    fail "offered $(summary offered) != 300000 or delivered + dropped != offered"
  ;;
signals)
  # Signals only once the runner says it is running: before its handler is
  # installed, a SIGINT to a background job of this script is ignored.
  for sig in INT TERM; do
    start --nic "synthetic:count=0,size=64-256,pps=200000,seed=5"
    wait_for_line '^running' 30
    sleep 1
    rc=0; finish $sig || rc=$?
    [ $rc = 0 ] || fail "SIG$sig: exit status $rc, want 0"
    grep -q "summary:" "$out" || fail "SIG$sig: no summary"
    n=$(sed -n 's/.*signal=\([0-9]*\).*/\1/p' "$out")
    want=$([ $sig = INT ] && echo 2 || echo 15)
    [ "$n" = "$want" ] || fail "SIG$sig: summary says signal=$n"
    off=$(summary offered) del=$(summary delivered) drop=$(summary dropped) rel=$(summary released)
    left=$(summary left_in_ring) kp=$(summary kernel_packets)
    echo "SIG$sig: exit 0, offered=$off delivered=$del dropped=$drop released=$rel left_in_ring=$left kernel=$kp"
    [ "$del" -gt 0 ] && [ "$off" = $((del + drop)) ] && [ "$rel" = "$kp" ] && [ "$del" = $((rel + left)) ] ||
      fail "SIG$sig: counters do not add up"
  done
  # A kernel that ignores its exit flag: the first SIGINT starts a stop that
  # cannot finish; the second forces the exit at once with status 130.
  start --nic "synthetic:count=0,size=64,pps=100000" --stall-after 10 --stall-ignores-exit
  wait_for_line '^running' 30
  # Until the kernel has its 10 packets and hangs: a SIGINT before that
  # (a loaded machine may not have run the kernel yet) meets a kernel that
  # still stops, drains and exits.
  sleep 1
  kill -INT "$pid"
  wait_for_line '^stopping \(signal 2\)' 30
  sleep 0.2
  kill -0 "$pid" 2>/dev/null || fail "the first SIGINT ended a run whose kernel cannot stop"
  second_sigint_exits_at_once
  ;;
snapshot)
  nic="synthetic:count=1000,size=64"
  start --nic "$nic" --snapshot-dir "$work"
  rc=0; finish || rc=$?
  [ $rc = 0 ] || fail "run failed with $rc"
  snap=$(sed -n 's/^snapshot //p' "$out")
  [ -s "$snap" ] || fail "no snapshot file"
  "$gnio" caps --diff "$snap" --nic "$nic" --gpu cpu >"$work/diff.txt" || fail "caps --diff found a difference: $(cat "$work/diff.txt")"
  grep -q "no difference" "$work/diff.txt" || fail "unexpected diff output: $(cat "$work/diff.txt")"
  echo "snapshot $snap: caps --diff says no difference"
  ;;
top)
  # gnio top in tmux against a run with a block stalled on purpose.
  start --nic "synthetic:count=0,size=64-512,pps=50000,queues=2,seed=7" --metrics 127.0.0.1:0 --hang-timeout 300 --stall-after 2000
  wait_for_line '^metrics http' 10
  url=$(metrics_url)
  tmux new-session -d -s "$session" -x 160 -y 40 "$gnio top --url $url --interval 0.5" || fail "tmux new-session failed"
  verdict=""
  for _ in $(seq 60); do
    sleep 0.25
    tmux capture-pane -p -t "$session" >"$work/pane.txt"
    grep -q "HUNG" "$work/pane.txt" && { verdict=1; break; }
  done
  cat "$work/pane.txt"
  [ -n "$verdict" ] || fail "gnio top never showed the hung block"
  grep -qE '^ *0 +.*HUNG.*process' "$work/pane.txt" || fail "the HUNG row is not block 0 at stage process"
  grep -qE '^ *1 +.*ok' "$work/pane.txt" || fail "block 1 is not shown as ok"
  grep -qE 'queue +rx pps' "$work/pane.txt" || fail "no queue table"
  tmux send-keys -t "$session" q
  sleep 0.5
  tmux has-session -t "$session" 2>/dev/null && fail "gnio top did not quit on 'q'"
  finish TERM || fail "runner exit status $? after SIGTERM"
  ;;
*)
  echo "unknown case $case_name"; exit 2 ;;
esac
echo "PASS ($case_name)"
