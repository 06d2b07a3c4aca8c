#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `gnio run packet-processing` as an operated service, end to end on the
# emulated device: stop signals with exact accounting, a second SIGINT,
# /metrics scraped with curl while it runs (checked by prometheus_client's
# parser and against the run's own --json totals), `gnio top`, and the capability snapshot that
# `gnio caps --diff` reads.
# usage: run_e2e.sh CASE GNIO WORKDIR
set -uo pipefail
case_name=$1 gnio=$2 work=$3/$1
rm -rf "$work"
mkdir -p "$work"
out="$work/run.out" err="$work/run.err"
program="gnio run"
session="gnio-run-top-$$"
. "$(dirname "$0")/../support/e2e_lib.sh"
trap cleanup EXIT
start() {  # start ARGS...: gnio run packet-processing in the background
  launch "$gnio" run packet-processing --gpu cpu --quiet "$@"
}
# rx FIELD: a value of the summary's "rx:" line
rx() { sed -n "s/^rx:.* $1 \([0-9]*\).*/\1/p" "$out"; }
# js EXPR FILE: a value of the --json report
js() { python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print($1)" "$2"; }

case $case_name in
signals)
  # The first SIGINT/SIGTERM: the sources stop, the kernel drains what was
  # published, the summary adds up exactly, exit 0. The metrics line comes
  # after the kernel started: signals before it would test nothing.
  for sig in INT TERM; do
    start --rx "synthetic:count=0,size=64-256,pps=200000,seed=5,queues=2" --queues 2 --metrics 127.0.0.1:0 \
          --json "$work/$sig.json"
    wait_for_line '^metrics http' 60
    sleep 1
    rc=0; finish $sig || rc=$?
    [ $rc = 0 ] || fail "SIG$sig: exit status $rc, want 0"
    grep -q "(signal SIG$sig)" "$out" || fail "SIG$sig: the summary does not name the signal"
    off=$(rx offered) del=$(rx delivered) drop=$(rx dropped) rel=$(rx released) left=$(rx left_in_ring)
    kp=$(rx kernel_packets)
    echo "SIG$sig: exit 0, offered=$off delivered=$del dropped=$drop released=$rel left_in_ring=$left kernel=$kp"
    [ -n "$off" ] && [ "$del" -gt 0 ] || fail "SIG$sig: no rx line or nothing delivered"
    [ "$off" = $((del + drop)) ] || fail "SIG$sig: offered $off != delivered $del + dropped $drop"
    [ "$left" = 0 ] && [ "$rel" = "$del" ] || fail "SIG$sig: the kernel did not drain ($left left in the ring)"
    [ "$kp" = "$del" ] || fail "SIG$sig: the kernel counted $kp packets, the queues delivered $del"
    j="$work/$sig.json"
    [ "$(js 'r["run"]["stop_reason"]' "$j")" = signal ] || fail "SIG$sig: stop_reason $(js 'r["run"]["stop_reason"]' "$j")"
    [ "$(js 'r["run"]["signal"]' "$j")" = "$([ $sig = INT ] && echo 2 || echo 15)" ] || fail "SIG$sig: json signal"
    [ "$(js 'r["run"]["packets"]' "$j")" = "$del" ] || fail "SIG$sig: json run.packets != delivered $del"
    [ "$(js 'sum(q["offered"] for q in r["rx_queues"])' "$j")" = "$off" ] || fail "SIG$sig: json offered"
  done
  ;;
second-sigint)
  # Echo requests answered through a TX queue that sends one frame per
  # 50 ms: after the first SIGINT the drain takes seconds; a second SIGINT
  # must end the run at once with 130.
  start --rx "synthetic:count=0,size=64,proto=icmp,pps=20000" \
        --tx "fault:slow_us=50000,inner=pcap-out:$work/replies.pcap" --log-level info --metrics 127.0.0.1:0
  wait_for_line '^metrics http' 60
  sleep 1
  kill -INT "$pid"
  wait_for_line 'stop requested by SIGINT' 30 "$err"
  sleep 0.3
  kill -0 "$pid" 2>/dev/null || fail "the run ended before the second SIGINT (the drain was too fast to test)"
  second_sigint_exits_at_once
  ;;
metrics)
  # A paced finite source with two queues, scraped while it runs; every
  # scraped counter grows and never exceeds the run's final --json totals.
  start --rx "synthetic:count=300000,size=64-512,pps=100000,seed=3,queues=2" --queues 2 --metrics 127.0.0.1:0 \
        --json "$work/report.json" --log-level info
  wait_for_line '^metrics http' 60
  url=$(metrics_url)
  [ "$(grep -c '^metrics http' "$out")" = 1 ] || fail "the metrics address is printed more than once"
  grep -q "serving $url" "$err" || fail "the bound address is not logged at info"
  curl -sf "$url" >"$work/early.prom" || fail "curl $url failed"
  sleep 0.7
  curl -sf "$url" >"$work/mid.prom" || fail "second curl failed"
  "$gnio" top --url "$url" --once --interval 0.3 >"$work/top.txt" || fail "gnio top --once failed"
  "$(dirname "$0")/../support/check_exposition.py" <"$work/mid.prom" || fail "the exposition was rejected"
  rc=0; finish || rc=$?
  [ $rc = 0 ] || fail "gnio run exited with $rc"
  cat "$work/top.txt"
  grep -qE '^0 +[0-9]' "$work/top.txt" && grep -qE '^1 +[0-9]' "$work/top.txt" || fail "gnio top does not show queues 0 and 1"
  grep -qE '^0 +.* ok +(receive|process|reply_wait|release)' "$work/top.txt" || fail "gnio top shows no named stage for block 0"
  grep -q '^gnio_rx_packets_total{queue="1",gpu="cpu",backend="synthetic"} ' "$work/mid.prom" || fail "labels queue/gpu/backend missing"
  grep -q '^gnio_kernel_hung{gpu="cpu",block="1"} 0' "$work/mid.prom" || fail "no hang verdict for block 1"
  grep -q '^gnio_kernel_stage{gpu="cpu",block="0",stage="' "$work/mid.prom" || fail "no stage for block 0"
  r="$work/report.json"
  for pair in "gnio_rx_offered_total sum(q['offered'] for q in r['rx_queues'])" \
              "gnio_rx_packets_total sum(q['packets'] for q in r['rx_queues'])" \
              "gnio_kernel_packets_total r['kernel']['packets']" \
              "gnio_rx_engine_work_polls_total sum(q['engine']['work_polls'] for q in r['rx_queues'])" \
              "gnio_pp_protocol_packets_total{gpu=\"cpu\",protocol=\"udp\"} r['protocols']['udp']" \
              "gnio_pp_protocol_packets_total{gpu=\"cpu\",protocol=\"ipv4\"} r['protocols']['ipv4']" \
              "gnio_pp_flow_table_updates_total r['flows']['table_updates']" \
              "gnio_pp_records_waited_total r['records']['waited_for_host']"; do
    name=${pair%% *} expr=${pair#* }
    early=$(sum "$name" "$work/early.prom") mid=$(sum "$name" "$work/mid.prom") final=$(js "$expr" "$r")
    echo "$name: $early then $mid while running, $final at the end"
    [ "$early" -le "$mid" ] && [ "$mid" -le "$final" ] || fail "$name is not monotonic or exceeds the final total"
  done
  early=$(sum gnio_rx_packets_total "$work/early.prom") mid=$(sum gnio_rx_packets_total "$work/mid.prom")
  [ "$early" -gt 0 ] && [ "$mid" -gt "$early" ] && [ "$mid" -lt 300000 ] || fail "counters did not grow while running ($early, $mid)"
  [ "$(js "sum(q['offered'] for q in r['rx_queues'])" "$r")" = 300000 ] || fail "offered is not 300000"
  ;;
top-tmux)
  command -v tmux >/dev/null || { echo "SKIP: tmux is not installed"; exit 0; }
  start --rx "synthetic:count=0,size=64-512,pps=50000,queues=2,seed=7" --queues 2 --metrics 127.0.0.1:0
  wait_for_line '^metrics http' 60
  url=$(metrics_url)
  tmux new-session -d -s "$session" -x 160 -y 40 "$gnio top --url $url --interval 0.5" || fail "tmux new-session failed"
  shown=""
  for _ in $(seq 80); do
    sleep 0.25
    tmux capture-pane -p -t "$session" >"$work/pane.txt"
    grep -qE '^1 +[0-9.]+ ' "$work/pane.txt" && grep -qE '^ *1 +.* ok ' "$work/pane.txt" && { shown=1; break; }
  done
  cat "$work/pane.txt"
  [ -n "$shown" ] || fail "gnio top never showed queue 1 and block 1"
  grep -q "no hung block" "$work/pane.txt" || fail "gnio top reports a hung block in a healthy run"
  tmux send-keys -t "$session" q
  sleep 0.5
  tmux has-session -t "$session" 2>/dev/null && fail "gnio top did not quit on 'q'"
  rc=0; finish TERM || rc=$?
  [ $rc = 0 ] || fail "gnio run exit status $rc after SIGTERM"
  ;;
snapshot)
  rx="synthetic:count=1000,size=64"
  start --rx "$rx" --snapshot-dir "$work"
  rc=0; finish || rc=$?
  [ $rc = 0 ] || fail "gnio run failed with $rc"
  snap=$(sed -n 's/^snapshot //p' "$out")
  case $(basename "$snap") in caps-20[0-9][0-9][01][0-9][0-3][0-9]T[0-9][0-9][0-9][0-9][0-9][0-9].[0-9][0-9][0-9]Z-cpu.json) ;;
    *) fail "snapshot file name '$snap' is not caps-<UTC time>-<gpu>.json" ;; esac
  [ -s "$snap" ] || fail "no snapshot file"
  "$gnio" caps --diff "$snap" >"$work/diff.txt" || fail "caps --diff found a difference: $(cat "$work/diff.txt")"
  grep -q "no difference" "$work/diff.txt" || fail "unexpected diff output: $(cat "$work/diff.txt")"
  grep -q "nic '$rx', gpu 'cpu'" "$work/diff.txt" || fail "caps --diff did not ask the run's question: $(cat "$work/diff.txt")"
  # A different GPU is a difference that caps --diff reports (exit 1).
  rc=0; "$gnio" caps --diff "$snap" --gpu 0000:99:00.0 >"$work/diff2.txt" || rc=$?
  [ $rc = 1 ] || fail "caps --diff against another GPU exited $rc, want 1: $(cat "$work/diff2.txt")"
  echo "snapshot $snap: caps --diff says no difference; against another GPU: $(tail -1 "$work/diff2.txt")"
  ;;
*)
  echo "unknown case $case_name"; exit 2 ;;
esac
echo "PASS ($case_name)"
