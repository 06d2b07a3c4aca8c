# SPDX-License-Identifier: Apache-2.0
"""gnio run packet-processing --ipfix against Debian's collectors on loopback.

usage: collectors.py CASE GNIO DATA_DIR WORK_DIR

Cases:
  nfacctd-captures, nfcapd-captures: every bundled capture exported to the
    collector (pmacct's nfacctd, print plugin writing JSON with gnio's
    enterprise elements declared in aggregate_primitives; nfdump's nfcapd
    read back by `nfdump -o json`); every flow (key, packets and octets both
    ways, start and end in ms) and, for nfacctd, every DNS/HTTP/TLS record
    must equal gnio's own --flows-out and --json report exactly.
  nfacctd-synthetic, nfcapd-synthetic: the same for a synthetic run of
    100 000 flows.
  evictions: a flow table far smaller than the flows: every packet of a
    tracked flow reaches nfcapd (evicted entries exported from the kernel's
    eviction log).
  collector-restart: nfacctd started after gnio, stopped and started again
    while it runs: losses counted, the templates sent again, the restarted
    collector decodes flows, sent + lost = made.
  tcp-stalled: a TCP collector that accepts and never reads: back-pressure
    and queue_full counted, the run ends with every packet processed, sent +
    lost = made; ipfixDump reads what it received.
  events: --events-out lines parse as JSON, their counts equal the report's;
    unix:PATH delivers the same lines to a listening stream socket; SIGHUP
    reopens the file after a rotation.
Exit 0 pass, 1 fail, 77 skip (a collector binary is missing).
"""
import collections
import datetime
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time

CASE, GNIO, DATA, WORK = sys.argv[1:5]
CAPTURES = ["dns", "http", "tls", "ping", "vlan", "arp", "adversarial"]
SYNTHETIC = "synthetic:count=200000,flows=100000,proto=mix,ipv6=mix,size=100-300,seed=7"
os.environ["TZ"] = "UTC"
children = []
shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def need(tool):
    path = shutil.which(tool) or shutil.which(tool, path="/usr/sbin:/usr/bin")
    if not path:
        print(f"SKIP: {tool} is not installed (Debian pmacct, nfdump, libfixbuf-tools)")
        sys.exit(77)
    return path


def free_port(kind=socket.SOCK_DGRAM):
    s = socket.socket(socket.AF_INET, kind)
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def stop(p, sig=signal.SIGTERM):
    if p.poll() is None:
        p.send_signal(sig)
        try:
            p.wait(timeout=20)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def cleanup():
    for p in children:
        stop(p)


def wait_for(path, text, timeout=30):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if os.path.exists(path) and text in open(path, errors="replace").read():
            return
        time.sleep(0.1)
    fail(f"{path} never said {text!r}")


PRIMITIVES = """\
name=rev_packets field_type=29305:2 len=8 semantics=u_int
name=rev_bytes field_type=29305:1 len=8 semantics=u_int
name=end_reason field_type=136 len=1 semantics=u_int
name=obs_ms field_type=323 len=8 semantics=u_int
name=dns_id field_type=32473:4 len=2 semantics=u_int
name=dns_response field_type=32473:5 len=1 semantics=u_int
name=dns_qname field_type=32473:1 len=vlen semantics=str
name=dns_qtype field_type=32473:2 len=2 semantics=u_int
name=dns_rcode field_type=32473:3 len=1 semantics=u_int
name=http_method field_type=32473:10 len=vlen semantics=str
name=http_host field_type=32473:11 len=vlen semantics=str
name=http_path field_type=32473:12 len=vlen semantics=str
name=http_version field_type=32473:13 len=vlen semantics=str
name=tls_sni field_type=32473:20 len=vlen semantics=str
"""
AGGREGATE = ("src_host, dst_host, src_port, dst_port, proto, timestamp_start, timestamp_end, rev_packets, "
             "rev_bytes, end_reason, obs_ms, dns_id, dns_response, dns_qname, dns_qtype, dns_rcode, http_method, "
             "http_host, http_path, http_version, tls_sni")


class Nfacctd:
    def __init__(self, work, port):
        self.work, self.port = work, port
        os.makedirs(work, exist_ok=True)
        self.out = os.path.join(work, "out.json")
        with open(os.path.join(work, "primitives.lst"), "w") as f:
            f.write(PRIMITIVES)
        with open(os.path.join(work, "nfacctd.conf"), "w") as f:
            f.write(f"""daemonize: false
nfacctd_ip: 127.0.0.1
nfacctd_port: {port}
nfacctd_pipe_size: 33554432
aggregate_primitives: {work}/primitives.lst
plugins: print[all]
aggregate[all]: {AGGREGATE}
print_output[all]: json
print_output_file[all]: {self.out}
print_output_file_append[all]: true
print_refresh_time[all]: 1
plugin_buffer_size[all]: 102400
plugin_pipe_size[all]: 102400000
timestamps_secs: false
nfacctd_time_new: false
logfile: {work}/nfacctd.log
pidfile: {work}/nfacctd.pid
""")
        self.start()

    def start(self):
        log = os.path.join(self.work, "nfacctd.log")
        if os.path.exists(log):
            os.rename(log, log + f".{time.time()}")
        self.p = subprocess.Popen([need("nfacctd"), "-f", os.path.join(self.work, "nfacctd.conf")],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        children.append(self.p)
        wait_for(log, "waiting for NetFlow/IPFIX data")

    def stop(self):
        time.sleep(2.5)  # print_refresh_time: the last records reach the file
        stop(self.p, signal.SIGINT)

    def rows(self):
        rows = []
        if os.path.exists(self.out):
            for line in open(self.out):
                line = line.strip()
                if line:
                    rows.append(json.loads(line))
        return rows


def ms_text(t):
    # nfacctd's "YYYY-MM-DD HH:MM:SS.ffffff" (UTC) as milliseconds since the epoch
    d = datetime.datetime.strptime(t, "%Y-%m-%d %H:%M:%S.%f").replace(tzinfo=datetime.timezone.utc)
    return int(d.timestamp()) * 1000 + d.microsecond // 1000


def iso_ms(t):
    d = datetime.datetime.strptime(t, "%Y-%m-%dT%H:%M:%S.%f").replace(tzinfo=datetime.timezone.utc)
    return int(d.timestamp()) * 1000 + d.microsecond // 1000


def proto_number(p):
    """The protocol as a number; -1 for one the flow export names "ip"
    (neither ICMP, TCP, UDP nor ICMPv6), on both sides."""
    names = {"icmp": 1, "tcp": 6, "udp": 17, "ipv6-icmp": 58, "icmpv6": 58, "ip": -1}
    n = names[p] if p in names else int(p)
    return n if n in (1, 6, 17, 58) else -1


def canon(a):
    return socket.inet_ntop(socket.AF_INET6, socket.inet_pton(socket.AF_INET6, a)) if ":" in a else a


def expected_flows(flows_out):
    """gnio's final flow table as the export writes it: the source is endpoint
    a unless only b sent."""
    last = {}
    for line in open(flows_out):
        f = json.loads(line)
        last[(f["a"], f["port_a"], f["b"], f["port_b"], f["proto"])] = f
    out = {}
    for f in last.values():
        proto = proto_number(f["proto"])
        if f["packets_ab"] == 0:
            key = (canon(f["b"]), f["port_b"], canon(f["a"]), f["port_a"], proto)
            v = (f["packets_ba"], f["bytes_ba"], f["packets_ab"], f["bytes_ab"])
        else:
            key = (canon(f["a"]), f["port_a"], canon(f["b"]), f["port_b"], proto)
            v = (f["packets_ab"], f["bytes_ab"], f["packets_ba"], f["bytes_ba"])
        if key in out:
            fail(f"flow key {key} twice in gnio's table")
        out[key] = v + (f["first_ns"] // 1000000, f["last_ns"] // 1000000)
    return out


def sum_flows(rows):
    """Records of one flow (several with timeouts) added up: counts summed,
    start the earliest, end the latest."""
    out = {}
    for key, v in rows:
        if key in out:
            o = out[key]
            out[key] = (o[0] + v[0], o[1] + v[1], o[2] + v[2], o[3] + v[3], min(o[4], v[4]), max(o[5], v[5]))
        else:
            out[key] = v
    return out


def nfacctd_flows(rows):
    got = []
    for r in rows:
        if r.get("obs_ms", "0") != "0":
            continue
        key = (canon(r["ip_src"]), r["port_src"], canon(r["ip_dst"]), r["port_dst"], proto_number(r["ip_proto"]))
        got.append((key, (r.get("packets", 0), r.get("bytes", 0), int(r["rev_packets"]), int(r["rev_bytes"]),
                          ms_text(r["timestamp_start"]), ms_text(r["timestamp_end"]))))
    return sum_flows(got)


def record_key(kind, src, sport, dst, dport, ms, fields):
    return (kind, canon(src), sport, canon(dst), dport, ms) + tuple(fields)


def expected_records(report):
    want = []
    for r in report["dns"]:
        want.append(record_key("dns", r["src"], r["sport"], r["dst"], r["dport"], r["timestamp_ns"] // 1000000,
                               [r["id"], int(r["response"]), r["qname"], r["qtype"], r["rcode"]]))
    for r in report["http"]:
        want.append(record_key("http", r["src"], r["sport"], r["dst"], r["dport"], r["timestamp_ns"] // 1000000,
                               [r["method"], r["host"], r["path"], r["version"]]))
    for r in report["tls"]:
        want.append(record_key("tls", r["src"], r["sport"], r["dst"], r["dport"], r["timestamp_ns"] // 1000000,
                               [r["sni"]]))
    return want


def nfacctd_records(rows):
    got = []
    for r in rows:
        if r.get("obs_ms", "0") == "0":
            continue
        ms = int(r["obs_ms"])
        a = (r["ip_src"], r["port_src"], r["ip_dst"], r["port_dst"], ms)
        if r["dns_qname"] or r["dns_id"] != "0":
            got.append(record_key("dns", *a, [int(r["dns_id"]), int(r["dns_response"]), r["dns_qname"],
                                              int(r["dns_qtype"]), int(r["dns_rcode"])]))
        elif r["http_method"]:
            got.append(record_key("http", *a, [r["http_method"], r["http_host"], r["http_path"], r["http_version"]]))
        else:
            got.append(record_key("tls", *a, [r["tls_sni"]]))
    return got


def run_gnio(rx, work, ipfix, extra=(), check=True, slots=524288):
    report, flows = os.path.join(work, "report.json"), os.path.join(work, "flows.jsonl")
    cmd = [GNIO, "run", "packet-processing", "--gpu", "cpu", "--quiet", "--rx", rx, "--json", report,
           "--flows-out", flows, "--flow-slots", str(slots)] + [a for u in ipfix for a in ("--ipfix", u)] + list(extra)
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300)
    if check and p.returncode != 0:
        fail(f"{' '.join(cmd)} exited {p.returncode}:\n{p.stdout[-3000:]}")
    return json.load(open(report)), flows, p.stdout


def check_export_counts(report, what):
    e = report["export"]
    made = e["flow_records"] + e["app_records"]
    for c in e["ipfix"]:
        lost = sum(c["lost"].values())
        if c["records_sent"] + lost != made:
            fail(f"{what}: {c['url']} sent {c['records_sent']} + lost {lost} != made {made}")
    return e


def compare_flows(want, got, what):
    if want != got:
        missing = [k for k in want if k not in got][:5]
        extra = [k for k in got if k not in want][:5]
        differ = [(k, want[k], got[k]) for k in want if k in got and want[k] != got[k]][:5]
        fail(f"{what}: {len(want)} flows in gnio's table, {len(got)} at the collector; missing {missing}, "
             f"extra {extra}, differ {differ}")


def compare_records(want, got, what):
    # nfacctd aggregates identical rows into one: compare the distinct records.
    if set(want) != set(got):
        fail(f"{what}: records differ: only in gnio {sorted(set(want) - set(got))[:5]}, only at the collector "
             f"{sorted(set(got) - set(want))[:5]}")


def nfcapd_start(work, port):
    os.makedirs(work, exist_ok=True)
    p = subprocess.Popen([need("nfcapd"), "-b", "127.0.0.1", "-p", str(port), "-w", work, "-B", "33554432",
                          "-t", "3600"], stdout=open(os.path.join(work, "nfcapd.log"), "w"), stderr=subprocess.STDOUT)
    children.append(p)
    wait_for(os.path.join(work, "nfcapd.log"), "Startup")
    return p


def nfcapd_stop(p, work):
    time.sleep(0.5)
    stop(p)
    log = open(os.path.join(work, "nfcapd.log")).read()
    if "Sequence Errors: 0" not in log:
        fail(f"nfcapd saw sequence errors or no stream:\n{log}")
    files = [os.path.join(work, f) for f in os.listdir(work) if f.startswith("nfcapd.2")]
    rows = []
    for f in files:
        out = subprocess.run([need("nfdump"), "-r", f, "-o", "json"], stdout=subprocess.PIPE, text=True, check=True)
        # A file without records (nfcapd opens a new one at each full hour,
        # -t 3600) reads "[ No matching flows ]", which is not JSON.
        if out.stdout.strip() and "No matching flows" not in out.stdout:
            rows += json.loads(out.stdout)
    return rows


def nfdump_flows(rows):
    got = []
    for r in rows:
        if r.get("in_packets", 0) == 0:
            continue  # a DNS/HTTP/TLS record: nfdump keeps its 5-tuple only
        src = r.get("src4_addr") or r.get("src6_addr")
        dst = r.get("dst4_addr") or r.get("dst6_addr")
        # nfdump leaves out the ports of ICMP flows.
        key = (canon(src), r.get("src_port", 0), canon(dst), r.get("dst_port", 0), proto_number(r["proto"]))
        got.append((key, (r["in_packets"], r["in_bytes"], r.get("out_packets", 0), r.get("out_bytes", 0),
                          iso_ms(r["first"]), iso_ms(r["last"]))))
    return sum_flows(got)


def case_captures(collector):
    total_flows = total_records = 0
    for name in CAPTURES:
        work = os.path.join(WORK, name)
        os.makedirs(work, exist_ok=True)
        port = free_port()
        rx = f"pcap:{DATA}/captures/{name}.pcap"
        if collector == "nfacctd":
            c = Nfacctd(os.path.join(work, "nfacctd"), port)
            report, flows, _ = run_gnio(rx, work, [f"udp://127.0.0.1:{port}"])
            c.stop()
            rows = c.rows()
            got_flows = nfacctd_flows(rows)
            compare_records(expected_records(report), nfacctd_records(rows), name)
        else:
            p = nfcapd_start(os.path.join(work, "nfcapd"), port)
            report, flows, _ = run_gnio(rx, work, [f"udp://127.0.0.1:{port}"])
            got_flows = nfdump_flows(nfcapd_stop(p, os.path.join(work, "nfcapd")))
        e = check_export_counts(report, name)
        if e["ipfix"][0]["records_sent"] != e["flow_records"] + e["app_records"]:
            fail(f"{name}: records lost on loopback: {e['ipfix'][0]}")
        want = expected_flows(flows)
        compare_flows(want, got_flows, name)
        n_rec = len(report["dns"]) + len(report["http"]) + len(report["tls"])
        print(f"{collector} {name}: {len(want)} flows equal, {n_rec} records "
              f"{'equal' if collector == 'nfacctd' else '(not decoded by nfdump)'}")
        total_flows += len(want)
        total_records += n_rec
    print(f"PASS: {collector}: {total_flows} flows and {total_records} records of {len(CAPTURES)} captures")


def case_synthetic(collector):
    work = os.path.join(WORK, "synthetic")
    os.makedirs(work, exist_ok=True)
    port = free_port()
    if collector == "nfacctd":
        c = Nfacctd(os.path.join(work, "nfacctd"), port)
        report, flows, _ = run_gnio(SYNTHETIC, work, [f"udp://127.0.0.1:{port}"])
        c.stop()
        got = nfacctd_flows(c.rows())
    else:
        p = nfcapd_start(os.path.join(work, "nfcapd"), port)
        report, flows, _ = run_gnio(SYNTHETIC, work, [f"udp://127.0.0.1:{port}"])
        got = nfdump_flows(nfcapd_stop(p, os.path.join(work, "nfcapd")))
    check_export_counts(report, "synthetic")
    want = expected_flows(flows)
    if len(want) != 100000:
        fail(f"synthetic: gnio's table holds {len(want)} flows, want 100000 (evicted "
             f"{report['flows']['evicted']})")
    compare_flows(want, got, "synthetic")
    print(f"PASS: {collector}: 100000 synthetic flows equal (packets, octets both ways, start, end)")


def case_evictions():
    """A table far smaller than the flows: entries taken over are exported
    from the kernel's eviction log, so that every packet of a tracked flow
    reaches the collector."""
    work = os.path.join(WORK, "evictions")
    os.makedirs(work, exist_ok=True)
    port = free_port()
    p = nfcapd_start(os.path.join(work, "nfcapd"), port)
    rx = "synthetic:count=60000,flows=20000,proto=mix,ipv6=mix,size=100-300,seed=11"
    report, flows, _ = run_gnio(rx, work, [f"udp://127.0.0.1:{port}"], slots=1024)
    got = nfdump_flows(nfcapd_stop(p, os.path.join(work, "nfcapd")))
    e = check_export_counts(report, "evictions")
    evicted, untracked = report["flows"]["evicted"], report["flows"]["untracked_packets"]
    packets = sum(v[0] + v[2] for v in got.values())
    if evicted < 10000:
        fail(f"only {evicted} evictions: the case tests nothing")
    if e["evictions_lost"] != 0 or packets + untracked != report["kernel"]["packets"]:
        fail(f"packets at the collector {packets} + untracked {untracked} != processed "
             f"{report['kernel']['packets']} (evictions lost {e['evictions_lost']})")
    if len(got) != 20000 or any(v[0] + v[2] > 3 for v in got.values()):
        fail(f"{len(got)} flows at the collector, want 20000 of at most 3 packets each")
    print(f"PASS: evictions: {evicted} entries evicted, {e['flow_end_reasons']['lack_of_resources']} exported as "
          f"lack_of_resources; {packets} packets at the collector + {untracked} untracked = "
          f"{report['kernel']['packets']} processed")


def case_restart():
    work = os.path.join(WORK, "restart")
    os.makedirs(work, exist_ok=True)
    port = free_port()
    report = os.path.join(work, "report.json")
    cmd = [GNIO, "run", "packet-processing", "--gpu", "cpu", "--quiet", "--rx",
           "synthetic:count=30000,flows=200,pps=2000,seed=3", "--json", report, "--flow-active-timeout", "1",
           "--ipfix", f"udp://127.0.0.1:{port}"]
    g = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    children.append(g)
    time.sleep(2)  # exporting to nobody
    c = Nfacctd(os.path.join(work, "nfacctd"), port)
    time.sleep(2)
    stop(c.p, signal.SIGINT)
    first = len(c.rows())
    time.sleep(1.5)  # away again
    c.start()
    out, _ = g.communicate(timeout=120)
    if g.returncode != 0:
        fail(f"gnio exited {g.returncode}:\n{out[-2000:]}")
    c.stop()
    r = json.load(open(report))
    e = check_export_counts(r, "restart")
    x = e["ipfix"][0]
    after = len(c.rows()) - first
    if x["lost"]["collector_down"] == 0:
        fail(f"no loss counted while the collector was away: {x}")
    if x["template_sends"] < 3:
        fail(f"templates not sent again after the collector came back (twice): {x}")
    if first == 0 or after == 0:
        fail(f"the collector decoded {first} rows before and {after} after its restart")
    print(f"PASS: collector-restart: made {e['flow_records'] + e['app_records']}, sent {x['records_sent']}, lost "
          f"collector_down {x['lost']['collector_down']}, templates sent {x['template_sends']}; the collector "
          f"decoded {first} rows, then {after} after its restart")


def case_tcp_stalled():
    need("ipfixDump")
    work = os.path.join(WORK, "tcp")
    os.makedirs(work, exist_ok=True)
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    port = srv.getsockname()[1]
    report, flows, out = run_gnio(SYNTHETIC, work, [f"tcp://127.0.0.1:{port}"])
    conn, _ = srv.accept()
    conn.settimeout(2)
    stream = b""
    try:
        while True:
            b = conn.recv(1 << 20)
            if not b:
                break
            stream += b
    except socket.timeout:
        pass
    e = check_export_counts(report, "tcp-stalled")
    x = e["ipfix"][0]
    if report["kernel"]["packets"] != 200000:
        fail(f"the data path stalled: {report['kernel']['packets']} of 200000 packets processed")
    if x["backpressure"] == 0 or x["lost"]["queue_full"] == 0:
        fail(f"a collector that does not read: no back-pressure or queue_full counted: {x}")
    path = os.path.join(work, "received.ipfix")
    # The stream ends where the collector stopped taking it: whole messages only.
    at = 0
    while at + 4 <= len(stream) and at + int.from_bytes(stream[at + 2:at + 4], "big") <= len(stream):
        at += int.from_bytes(stream[at + 2:at + 4], "big")
    open(path, "wb").write(stream[:at])
    d = subprocess.run([need("ipfixDump"), "--rfc5610", "-s", "-i", path], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    if d.returncode != 0 or d.stderr.strip():
        fail(f"ipfixDump on the received stream: rc {d.returncode}: {d.stderr[:1000]}")
    print(f"PASS: tcp-stalled: 200000 packets processed; made {e['flow_records']}, sent {x['records_sent']}, "
          f"lost queue_full {x['lost']['queue_full']}, back-pressure {x['backpressure']}; ipfixDump read "
          f"{at} bytes without a complaint")


def case_events():
    for name in ["dns", "http", "tls"]:
        work = os.path.join(WORK, "events-" + name)
        os.makedirs(work, exist_ok=True)
        ev = os.path.join(work, "events.json")
        report, _, _ = run_gnio(f"pcap:{DATA}/captures/{name}.pcap", work, [], ["--events-out", ev])
        lines = [json.loads(l) for l in open(ev)]
        kinds = collections.Counter(l["event_type"] for l in lines)
        e = report["export"]
        want = {"dns": len(report["dns"]), "http": len(report["http"]), "tls": len(report["tls"]),
                "flow": e["flow_records"]}
        if {k: kinds.get(k, 0) for k in want} != want or sum(kinds.values()) != e["events"]["lines"]:
            fail(f"events {name}: {dict(kinds)}, report {want}, lines {e['events']['lines']}")
        for l in lines:
            for k in ("timestamp", "event_type", "src_ip", "src_port", "dest_ip", "dest_port", "proto"):
                if k not in l:
                    fail(f"events {name}: {k} missing in {l}")
        print(f"events {name}: {dict(kinds)} equal the report")
    # unix:PATH: a shipper's listening stream socket gets the same lines.
    work = os.path.join(WORK, "events-unix")
    os.makedirs(work, exist_ok=True)
    path = os.path.join(work, "shipper.sock")
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(path)
    srv.listen(1)
    report, _, _ = run_gnio(f"pcap:{DATA}/captures/dns.pcap", work, [], ["--events-out", "unix:" + path])
    conn, _ = srv.accept()
    conn.settimeout(2)
    data = b""
    try:
        while True:
            b = conn.recv(65536)
            if not b:
                break
            data += b
    except socket.timeout:
        pass
    lines = [json.loads(l) for l in data.decode().splitlines()]
    e = report["export"]
    if len(lines) != e["events"]["lines"] or len(lines) != len(report["dns"]) + e["flow_records"]:
        fail(f"unix: {len(lines)} lines at the socket, report {e['events']}, dns {len(report['dns'])}, flows "
             f"{e['flow_records']}")
    print(f"events unix: {len(lines)} lines at the shipper's socket equal the report")
    # SIGHUP after the file was moved away: the rest goes to a new file.
    work = os.path.join(WORK, "events-hup")
    os.makedirs(work, exist_ok=True)
    ev, report = os.path.join(work, "events.json"), os.path.join(work, "report.json")
    g = subprocess.Popen([GNIO, "run", "packet-processing", "--gpu", "cpu", "--quiet", "--rx",
                          "synthetic:count=12000,flows=50,pps=3000", "--flow-active-timeout", "1",
                          "--events-out", ev, "--json", report], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    children.append(g)
    time.sleep(2)
    os.rename(ev, ev + ".1")
    g.send_signal(signal.SIGHUP)
    out, _ = g.communicate(timeout=60)
    if g.returncode != 0:
        fail(f"gnio exited {g.returncode} after SIGHUP: {out[-1000:]}")
    old = [json.loads(l) for l in open(ev + ".1")]
    new = [json.loads(l) for l in open(ev)]
    r = json.load(open(report))["export"]
    if not old or not new or len(old) + len(new) != r["events"]["lines"] or r["events"]["reopens"] != 1:
        fail(f"SIGHUP: {len(old)} lines before, {len(new)} after, report {r['events']}")
    if len(old) + len(new) != r["flow_records"]:
        fail(f"SIGHUP: {len(old) + len(new)} flow events, {r['flow_records']} flow records")
    print(f"PASS: events: counts equal the report; SIGHUP: {len(old)} lines in the rotated file, {len(new)} in "
          f"the reopened one")


try:
    if CASE in ("nfacctd-captures", "nfcapd-captures"):
        case_captures(CASE.split("-")[0])
    elif CASE in ("nfacctd-synthetic", "nfcapd-synthetic"):
        case_synthetic(CASE.split("-")[0])
    elif CASE == "evictions":
        case_evictions()
    elif CASE == "collector-restart":
        case_restart()
    elif CASE == "tcp-stalled":
        case_tcp_stalled()
    elif CASE == "events":
        case_events()
    else:
        fail(f"unknown case {CASE}")
finally:
    cleanup()
