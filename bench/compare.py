#!/usr/bin/env python3
"""Side-by-side point-to-point figures: Tagwire against Open MPI, MPICH and
ucx_perftest on the same machine and transport, in one run, interleaved.

Run through bench/compare, which installs and builds what this needs. Every
MPI column runs the same program (bench/mpi/osu_p2p.c), built with each
MPI's own compiler wrapper (ours is tagwire-cc). Each point is measured
--reps times, round-robin over the columns (a noisy minute hits them all
alike); the table gives medians, the spread (max-min over median), and the
ratio of Tagwire to the best peer. Plots are written with gnuplot.
"""
import argparse
import json
import math
import os
import shutil
import socket
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SIZES_ALL = [0] + [1 << k for k in range(23)]  # 0 B .. 4 MiB
PERFTEST_SIZES = [8, 64, 512, 4096, 32768, 262144, 1048576, 4194304]
HEADLINE = [  # (test, size): the points the targets name
    ("latency", 8),
    ("rate", 8),
    ("bw", 1048576),
    ("bw", 4194304),
    ("fop", 8),
    ("put", 8),
    ("get", 8),
    ("putbw", 1048576),
    ("getbw", 1048576),
]
FAILURES = []  # peer runs that hung or failed, listed under the table
PERFTEST_NAMES = {"ucx_perftest", "ib_write_lat", "ib_read_bw", "ib_write_bw", "ib_atomic_lat",
                  "ib_read_lat"}
NOT_MPI = PERFTEST_NAMES | {"floor"}  # columns that are no MPI peer
LOAD = []  # busy processes started by --load
# fop: osu_p2p fop_latency, MPI_Fetch_and_op (MPI_SUM, int64) + MPI_Win_flush
# on a peer's window, us per operation (8 B only); put, get: the same with
# an 8-byte MPI_Put / MPI_Get (osu_p2p put_latency, get_latency)
ONE_SIDED = ("fop", "put", "get")
SHM_ONE_SIDED_ITERS = 300000
# putbw, getbw: osu_p2p put_bw / get_bw, windows of 64 MPI_Put (MPI_Get) of
# each size + one MPI_Win_flush, MB/s, at the --sizes (as bw)
LOWER_IS_BETTER = {"latency": True, "bw": False, "bibw": False, "rate": False, "fop": True,
                   "put": True, "get": True, "putbw": False, "getbw": False}
UNITS = {"latency": "us", "bw": "MB/s", "bibw": "MB/s", "rate": "msg/s", "fop": "us",
         "put": "us", "get": "us", "putbw": "MB/s", "getbw": "MB/s"}


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def ucx_env(transport):
    if transport == "shm":
        return {"UCX_TLS": "sm,self"}
    if transport == "tcp":
        return {"UCX_TLS": "tcp,self", "UCX_NET_DEVICES": "lo"}
    if transport == "rxe":
        return {
            "UCX_TLS": "rc_verbs,ud_verbs,self",
            "UCX_NET_DEVICES": "rxe0:1",
            "UCX_UD_VERBS_ETH_DGID_CHECK": "n",
        }
    raise ValueError(transport)


class Column:
    """One implementation on one transport: how to run osu_p2p or perftest."""

    def __init__(self, name, transport, argv_prefix, env, binary):
        self.name = name
        self.transport = transport
        self.argv_prefix = argv_prefix
        self.env = env
        self.binary = binary

    def run_osu(self, test, sizes, timeout, iters=None):
        lo, hi = min(sizes), max(sizes)
        osu_test = {"rate": "mbw_mr", "fop": "fop_latency", "put": "put_latency",
                    "get": "get_latency", "putbw": "put_bw", "getbw": "get_bw"}.get(test, test)
        argv = self.argv_prefix + [self.binary, osu_test, "-m", f"{lo}:{hi}"]
        if iters:
            argv += ["-i", str(iters)]
        env = dict(os.environ, **self.env)
        out = run_job(argv, env, timeout)
        if out.returncode != 0:
            raise RuntimeError(f"{self.name}: {' '.join(argv)} failed ({out.returncode}):\n"
                               f"{out.stderr[-2000:]}")
        points = {}
        for line in out.stdout.splitlines():
            f = line.split()
            if len(f) < 2 or not f[0].isdigit():
                continue  # headers, and any library's log lines on stdout
            size = int(f[0])
            if size not in sizes:
                continue
            # latency: us; bw/bibw: MB/s; mbw_mr: MB/s and msg/s
            points[size] = float(f[2]) if test == "rate" else float(f[1])
        return points


def build_with(cc, src, out):
    """`src` (a C MPI program of bench/mpi) built by an MPI's compiler wrapper."""
    subprocess.run([cc, "-O2", "-Wall", "-Werror", src, "-o", out], check=True)
    return out


def run_extra(name, what, rep, argv, env, timeout, valid):
    """One run of an extra program (--crowd, --flood): the fields of its
    output, or None once a peer's hang or failure is listed under the table
    (ours fails the whole run, loudly)."""
    ours = name.startswith("tagwire")
    try:
        out = run_job(argv, dict(os.environ, **env), timeout)
    except subprocess.TimeoutExpired:
        if ours:
            raise
        FAILURES.append(f"{name} {what}, rep {rep + 1}: timed out")
        return None
    f = out.stdout.split()
    if out.returncode != 0 or not valid(f):
        if ours:
            raise RuntimeError(f"{name}: {what} failed:\n{out.stderr[-2000:]}")
        FAILURES.append(f"{name} {what}, rep {rep + 1}: exit {out.returncode}")
        return None
    return f


def run_job(argv, env, timeout):
    """Runs a launcher and its ranks in their own process group, so that a
    timeout takes the ranks down too, not only the launcher."""
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, 9)
        proc.communicate()
        raise
    return subprocess.CompletedProcess(argv, proc.returncode, stdout, stderr)


def tagwire_env(transport):
    """Tagwire's own path on each: its shared memory on one host (what auto
    picks), its verbs transport on rxe, UCX over TCP."""
    if transport == "shm":
        return {"TAGWIRE_TRANSPORT": "shm"}
    if transport == "verbs":
        return {"TAGWIRE_TRANSPORT": "verbs", "TAGWIRE_DEVICE": "rxe0"}
    return dict(ucx_env(transport), TAGWIRE_TRANSPORT="ucx")


def tagwire_column(transport, build):
    run = os.path.join(build, "tools", "tagwire-run")
    return Column("tagwire", transport, [run, "-n", "2", "--timeout", "600"],
                  tagwire_env(transport), os.path.join(build, "bench", "osu_p2p"))


class FloorColumn:
    """The one-node floor: a cache line handed between two processes
    (bench/cacheline_floor.c), as the 8-byte latency no library can beat."""

    def __init__(self, build):
        self.name = "floor"
        self.binary = os.path.join(build, "bench", "cacheline_floor")

    def run_osu(self, test, sizes, timeout, iters=None):
        if test != "latency" or 8 not in sizes:
            return {}
        out = run_job([self.binary, "2000000"], dict(os.environ), timeout)
        for line in out.stdout.splitlines():
            f = line.split()
            if len(f) == 3 and f[0] == "floor":
                return {8: float(f[2])}
        raise RuntimeError(f"floor: no figure in {out.stdout!r}")


def openmpi_columns(transport, binary):
    base = ["mpirun.openmpi", "--allow-run-as-root", "-np", "2"]
    # osc ucx: its windows over UCX as well (on one host it would take
    # osc/sm, shared memory, whatever the transport under test)
    ucx = base + ["--mca", "pml", "ucx", "--mca", "osc", "ucx", "--mca", "pml_ucx_tls", "any",
                  "--mca", "pml_ucx_devices", "any"]
    for k, v in ucx_env(transport).items():
        ucx += ["-x", f"{k}={v}"]
    cols = [Column("openmpi-ucx", transport, ucx, {}, binary)]
    if transport == "shm":
        # osc sm: left to choose, Open MPI 4.1 takes osc/rdma over vader for
        # MPI_Win_allocate (fop 0.10 us); osc/sm is its fastest (0.03 us).
        # osu_p2p's windows are all MPI_Win_allocate's, which osc/sm takes.
        cols.append(Column("openmpi-vader", transport,
                           base + ["--mca", "pml", "ob1", "--mca", "btl", "self,vader", "--mca",
                                   "osc", "sm"], {}, binary))
    elif transport == "tcp":
        cols.append(Column("openmpi-tcp", transport,
                           base + ["--mca", "pml", "ob1", "--mca", "btl", "self,tcp", "--mca",
                                   "btl_tcp_if_include", "lo"], {}, binary))
    return cols


def mpich_column(transport, binary):
    # Debian's MPICH is ch4:ucx: it runs on the same UCX transports.
    argv = ["mpirun.mpich", "-np", "2"]
    for k, v in ucx_env(transport).items():
        argv += ["-genv", k, v]
    return Column("mpich", transport, argv, {}, binary)


def server_client(server_argv, client_argv, env, pick, timeout, listen_wait, poll):
    """A perftest-style pair: starts the server, runs the client until it
    connects (the server needs a moment to listen) and pick(stdout) finds
    the result, then reaps the server. Returns what pick returned, or None."""
    server = subprocess.Popen(server_argv, env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    try:
        found = None
        deadline = time.monotonic() + listen_wait
        while found is None and time.monotonic() < deadline:
            time.sleep(poll)
            out = subprocess.run(client_argv, env=env, capture_output=True, text=True,
                                 timeout=timeout)
            found = pick(out.stdout)
        return found
    finally:
        try:
            server.wait(timeout=60)
        except subprocess.TimeoutExpired:
            server.kill()


def perftest_point(transport, test, size, timeout):
    """ucx_perftest's UCP tag test on the same transport: one process pair per point."""
    ptest = {"latency": "tag_lat", "fop": "ucp_fadd", "get": "ucp_get", "putbw": "ucp_put_bw",
             "getbw": "ucp_get"}.get(test, "tag_bw")
    iters = 100000 if size <= 8192 else max(200, 100000 * 8192 // max(size, 1) // 4)
    env = dict(os.environ, **ucx_env(transport))
    args = ["-t", ptest, "-s", str(max(size, 1)), "-n", str(iters), "-p", str(free_port())]

    def final(stdout):
        for l in stdout.splitlines():
            if l.startswith("Final:"):
                return l.split()
        return None

    line = server_client(["ucx_perftest"] + args, ["ucx_perftest", "127.0.0.1"] + args, env,
                         final, timeout, listen_wait=10, poll=0.3)
    if line is None:
        raise RuntimeError(f"ucx_perftest {ptest} {size} B on {transport} gave no result")
    # Final: iters typical_lat avg_lat overall_lat avg_bw overall_bw avg_mr overall_mr
    if test == "latency" or test in ONE_SIDED:
        return float(line[3])
    if test == "rate":
        return float(line[8])
    return float(line[6]) * 1.048576  # perftest's MB is MiB; ours is 10^6


def ib_perftest_point(test, size, timeout):
    """rdma-core's perftest on rxe0 (inside ci/rxe-vm): ib_write_lat for latency
    (half round trip, like ours), ib_read_bw for bandwidth (our rendezvous is an
    RDMA READ), ib_write_bw's message rate for the rate (our eager messages are
    RDMA WRITEs), ib_atomic_lat and ib_read_lat beside fop and get."""
    gid = os.environ.get("TAGWIRE_TEST_RXE_GID_INDEX")
    if gid is None:
        raise RuntimeError("the rxe columns run inside ci/rxe-vm (bench/compare --rxe)")
    prog = perftest_name("rxe", test)
    iters = 1000 if size <= 65536 else 100
    if test == "rate":
        iters = 20000  # a stream: more messages for a steady rate
    args = [prog, "-d", "rxe0", "-x", gid, "-n", str(iters), "-F", "-p", str(free_port())]
    if test != "fop":  # ib_atomic_lat's size is the atomic's, 8 B
        args[5:5] = ["-s", str(max(size, 2))]

    def result_row(stdout):
        for l in stdout.splitlines():
            f = l.split()
            if len(f) >= 5 and f[0] == str(max(size, 2)) and f[1] == str(iters):
                return f
        return None

    fields = server_client(args, args + ["127.0.0.1"], dict(os.environ), result_row, timeout,
                           listen_wait=30, poll=0.5)
    if fields is None:
        raise RuntimeError(f"{prog} {size} B gave no result")
    # ib_write_lat and ib_atomic_lat: bytes iters t_min t_max t_typical t_avg
    # ...; ib_read_bw and ib_write_bw: bytes iters peak avg(MB/s, 2^20)
    # msg_rate(Mpps)
    if test == "latency" or test in ONE_SIDED:
        return float(fields[5])
    if test == "rate":
        return float(fields[4]) * 1e6
    return float(fields[3]) * 1.048576


def measure(columns, transports, tests, sizes_for, reps, timeout, perftest, osu_iters):
    """results[(transport, test, column)][size] = [values over reps]"""

    def iters_for(test, transport):
        # One-sided calls over shared memory take tens of nanoseconds:
        # osu_p2p's 10,000 were a third of a millisecond, spreads of ±50-90 %.
        if test in osu_iters:
            return osu_iters[test]
        return SHM_ONE_SIDED_ITERS if transport == "shm" and test in ONE_SIDED else None

    results = {}
    total = reps * len(transports) * len(tests)
    step = 0
    for rep in range(reps):
        for transport in transports:
            for test in tests:
                step += 1
                sizes = sizes_for(test)
                has_perftest = perftest and perftest_name(transport, test) is not None
                log(f"[{step}/{total}] rep {rep + 1}/{reps} {transport} {test}: "
                    f"{', '.join(c.name for c in columns[transport])}"
                    f"{', ' + perftest_name(transport, test) if has_perftest else ''}")
                # Each rep starts at the next column, so that whatever
                # comes with a place in the round (the run after another
                # job's teardown, a neighbour's burst at its start) falls on
                # every column in turn, not always on the first.
                cols = columns[transport]
                k = rep % len(cols) if cols else 0
                for col in cols[k:] + cols[:k]:
                    t0 = time.monotonic()
                    try:
                        points = col.run_osu(test, sizes, timeout, iters_for(test, transport))
                    except (RuntimeError, subprocess.TimeoutExpired) as e:
                        if col.name.startswith("tagwire") or col.name == "floor":
                            raise  # ours fails the run, loudly
                        # A peer that hangs or crashes loses its points, not
                        # the run (MPICH 4.0.2's mbw_mr over UCX TCP hung once).
                        why = str(e).splitlines()[0]
                        log(f"    {col.name:15s} FAILED: {why}")
                        FAILURES.append(f"{col.name} {test} over {transport}, rep {rep + 1}: {why}")
                        continue
                    log(f"    {col.name:15s} {time.monotonic() - t0:5.1f} s")
                    for size, v in points.items():
                        results.setdefault((transport, test, col.name), {}).setdefault(
                            size, []).append(v)
                if has_perftest:
                    t0 = time.monotonic()
                    name = perftest_name(transport, test)
                    for size in [s for s in PERFTEST_SIZES if s in sizes]:
                        try:
                            v = (ib_perftest_point(test, size, timeout) if transport == "rxe"
                                 else perftest_point(transport, test, size, timeout))
                        except (RuntimeError, subprocess.TimeoutExpired) as e:
                            why = str(e).splitlines()[0]
                            log(f"    {name} {size} B FAILED: {why}")
                            FAILURES.append(f"{name} {test} {size} B over {transport}, "
                                            f"rep {rep + 1}: {why}")
                            continue
                        if not math.isfinite(v) or v <= 0:
                            log(f"    {name} {size} B printed {v}: point left out")
                            continue
                        results.setdefault((transport, test, name), {}).setdefault(
                            size, []).append(v)
                    log(f"    {name:15s} {time.monotonic() - t0:5.1f} s")
    return results


def perftest_name(transport, test):
    """The perftest column of a test, or None. A put + flush is a round trip
    (the WRITE and its acknowledgement), and the perftests that put
    (ucp_put_lat, ib_write_lat) report half of a ping-pong's: no column for
    put. A get's (ucp_get, ib_read_lat) is a round trip, as ours."""
    if test == "put":
        return None
    if transport != "rxe":
        return "ucx_perftest"
    return {"latency": "ib_write_lat", "rate": "ib_write_bw", "fop": "ib_atomic_lat",
            "get": "ib_read_lat", "putbw": "ib_write_bw"}.get(test, "ib_read_bw")


def summary(values):
    med = statistics.median(values)
    spread = (max(values) - min(values)) / med if med else 0.0
    return med, spread


def fmt(v):
    if v >= 1e5:
        return f"{v / 1e6:.2f} M"
    if v >= 100:
        return f"{v:.0f}"
    if v < 0.1:
        return f"{v:.3f}"  # one-sided over shared memory: 0.025 against 0.034 us
    return f"{v:.2f}"


def mpi_peers(results, transport, test, size, names):
    # Peers are the MPIs; perftest (no MPI semantics at all) has its own column.
    return [n for n in names if not n.startswith("tagwire") and n not in NOT_MPI and
            size in results.get((transport, test, n), {})]


def best_peer(results, transport, test, size, names, lower):
    vals = [(summary(results[(transport, test, n)][size])[0], n)
            for n in mpi_peers(results, transport, test, size, names)]
    if not vals:
        return None
    return min(vals) if lower else max(vals)


def paired_ratio(results, transport, test, size, names, lower):
    """The median over reps of Tagwire's figure against the best MPI peer's
    in the same rep. Steadier than the ratio of the medians when a whole
    sitting drifts (a soft-RoCE boot where every column, perftest too, ran
    twice as fast in its last rep as in its first). None unless every
    column has one figure per rep (a failed peer run would pair the wrong
    reps)."""
    tw = results.get((transport, test, "tagwire"), {}).get(size)
    peers = [results[(transport, test, n)][size]
             for n in mpi_peers(results, transport, test, size, names)]
    if not tw or not peers or any(len(p) != len(tw) for p in peers):
        return None
    pick = min if lower else max
    return statistics.median(t / pick(p[i] for p in peers) for i, t in enumerate(tw))


def write_table(results, transports, tests, names_by_transport, reps, extra, path):
    lines = [f"Medians of {reps} interleaved runs (spread = (max-min)/median); "
             f"ratio = Tagwire / best MPI peer (latency: lower is better, so < 1 wins; "
             f"bandwidth and rate: > 1 wins); worst: Tagwire's worst run against its median "
             f"(1 = steady); floor: a cache line between two processes; "
             f"per rep: the median of each rep's own ratio (Tagwire / the best MPI "
             f"peer in that rep).",
             ""]
    if LOAD:
        lines += [f"Under load: {len(LOAD)} busy processes ran beside every column.", ""]
    lines += ["## Headline points", "",
              "| transport | point | " + " | ".join(["tagwire", "best MPI peer", "ratio",
                                                     "vs perftest", "vs floor",
                                                     "ratio per rep"]) + " |",
              "|---|---|---:|---:|---:|---:|---:|---:|"]
    for transport in transports:
        for test, size in HEADLINE:
            if test not in tests:
                continue
            key = (transport, test, "tagwire")
            if size not in results.get(key, {}):
                continue
            lower = LOWER_IS_BETTER[test]
            tw, tw_spread = summary(results[key][size])
            best = best_peer(results, transport, test, size, names_by_transport[transport], lower)
            pt = results.get((transport, test, perftest_name(transport, test)), {}).get(size)
            pt_ratio = f"{tw / summary(pt)[0]:.2f}" if pt else "-"
            fl = results.get((transport, test, "floor"), {}).get(size)
            fl_ratio = f"{tw / summary(fl)[0]:.1f}" if fl else "-"
            best_s = f"{fmt(best[0])} ({best[1]})" if best else "-"
            ratio = f"{tw / best[0]:.2f}" if best else "-"
            # the worst run against the median (1 = steady; the issue asks > 0.8)
            runs = results[key][size]
            worst = (tw / max(runs)) if lower else (min(runs) / tw)
            paired = paired_ratio(results, transport, test, size, names_by_transport[transport],
                                  lower)
            paired_s = f"{paired:.2f}" if paired is not None else "-"
            lines.append(f"| {transport} | {test} {size} B ({UNITS[test]}) | "
                         f"{fmt(tw)} ±{tw_spread:.0%}, worst {worst:.2f} | {best_s} | {ratio} | "
                         f"{pt_ratio} | {fl_ratio} | {paired_s} |")
    for row in extra:
        lines.append(row)
    for transport in transports:
        for test in tests:
            # Every column stays in the header, even one whose every run
            # failed (its cells say "-", and the failures are listed below);
            # the floor only where it applies (8 B latency).
            names = [n for n in names_by_transport[transport]
                     if n != "floor" or (transport, test, n) in results]
            sizes = sorted(set().union(*[results.get((transport, test, n), {}).keys()
                                         for n in names]))
            lines += ["", f"## {test} over {transport} ({UNITS[test]})", "",
                      "| bytes | " + " | ".join(names) + " | tagwire / best MPI |",
                      "|---:|" + "---:|" * (len(names) + 1)]
            for size in sizes:
                cells = []
                for n in names:
                    v = results.get((transport, test, n), {}).get(size)
                    # the floor is one cache line: it has no figure at other sizes
                    missing = "n/a" if n == "floor" else "-"
                    cells.append(f"{fmt(summary(v)[0])} ±{summary(v)[1]:.0%}" if v else missing)
                best = best_peer(results, transport, test, size, names, LOWER_IS_BETTER[test])
                tw = results.get((transport, test, "tagwire"), {}).get(size)
                ratio = f"{summary(tw)[0] / best[0]:.2f}" if best and tw else "-"
                lines.append(f"| {size} | " + " | ".join(cells) + f" | {ratio} |")
    if FAILURES:
        lines += ["", "## Peer runs that failed (their points are missing)", ""]
        lines += [f"- {f}" for f in FAILURES]
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return "\n".join(lines)


def plot(results, transport, test, names, out_dir):
    """One PNG per test and transport: every column's median, bars min to max."""
    if shutil.which("gnuplot") is None:
        log("gnuplot not found: no plots (install gnuplot-nox)")
        return None
    series = []
    for n in names:
        pts = results.get((transport, test, n))
        if not pts:
            continue
        data = os.path.join(out_dir, f"{test}-{transport}-{n}.dat")
        with open(data, "w") as f:
            for size in sorted(pts):
                if size == 0:
                    continue  # a log axis has no 0
                f.write(f"{size} {summary(pts[size])[0]} {min(pts[size])} {max(pts[size])}\n")
        series.append((data, n))
    if not series:
        return None
    png = os.path.join(out_dir, f"{test}-{transport}.png")
    ylabel = {"latency": "one-way latency (us)", "bw": "bandwidth (MB/s)",
              "bibw": "bidirectional bandwidth (MB/s)", "rate": "messages per second",
              "fop": "MPI_Fetch_and_op + flush (us)", "put": "MPI_Put + flush (us)",
              "get": "MPI_Get + flush (us)", "putbw": "MPI_Put, 64 per flush (MB/s)",
              "getbw": "MPI_Get, 64 per flush (MB/s)"}[test]
    # A few sizes (a quick look) are points: lines between them would invent a curve.
    few = max(len(results.get((transport, test, n), {})) for n in names) < 4
    style = "yerrorbars" if test == "rate" or few else "yerrorlines"
    script = [
        "set terminal pngcairo size 1000,650 noenhanced",
        f"set output '{png}'",
        "set logscale x 2",
        "set format x '%.0b%B'",
        "set logscale y" if test == "latency" else "unset logscale y",
        "set xlabel 'message size (bytes; Ki = 1024, Mi = 1024 Ki)'",
        f"set ylabel '{ylabel}'",
        f"set title 'osu_p2p {test} over {transport}: median of the runs, bars from min to max'",
        "set key left top" if test == "latency" else "set key right bottom",
        "set grid",
        "plot " + ", ".join(f"'{d}' using 1:2:3:4 with {style} lw 2 title '{t}'"
                            for d, t in series),
    ]
    subprocess.run(["gnuplot"], input="\n".join(script), text=True, check=True)
    return png


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--transports", default="shm tcp")
    ap.add_argument("--tests", default="latency bw rate")
    ap.add_argument("--sizes", default="all",
                    help="'all' (0 B to 4 MiB) or a comma list of byte counts")
    ap.add_argument("--peers", default="openmpi mpich perftest")
    ap.add_argument("--build", default=os.path.join(ROOT, "build", "release"))
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "compare"))
    ap.add_argument("--timeout", type=int, default=300, help="seconds per program run")
    ap.add_argument("--osu-iters", default="",
                    help="osu_p2p -i per test, e.g. latency=1000,bw=2 (the VM is slow)")
    ap.add_argument("--load", type=int, default=0,
                    help="start this many busy processes beside every run (a loaded machine)")
    ap.add_argument("--crowd", type=int, default=0,
                    help="also time bench/mpi/alltoall_any with this many ranks (more than cores)")
    ap.add_argument("--flood", type=int, default=0,
                    help="also run bench/mpi/flood: this many 8-byte messages to a receiver "
                    "that sleeps 5 s (its peak memory and the time)")
    ap.add_argument("--collectives", default="",
                    help="also time bench/mpi/coll_latency with each of these rank counts "
                    "(comma list, e.g. 2,4): Tagwire's chosen shape and its binomial tree "
                    "beside Open MPI and MPICH")
    ap.add_argument("--collective-ops", default="bcast,reduce,allreduce,alltoall",
                    help="coll_latency's operations for --collectives")
    ap.add_argument("--collective-sizes", default="8,65536,1048576",
                    help="coll_latency's sizes for --collectives (bytes; alltoall: per pair)")
    ap.add_argument("--cancel", action="store_true",
                    help="also time Cancel + Wait of an unmatched eager send (bench/cancel_bench)")
    a = ap.parse_args()
    transports = a.transports.split()
    tests = a.tests.split()
    peers = a.peers.split()
    os.makedirs(a.out, exist_ok=True)
    if a.sizes == "all":
        sizes = SIZES_ALL
    else:
        sizes = [int(s) for s in a.sizes.split(",")]

    def sizes_for(test):
        if test == "rate" or test in ONE_SIDED:
            return [8]
        return [s for s in sizes if test == "latency" or s > 0]

    binaries = {}
    src = os.path.join(ROOT, "bench", "mpi", "osu_p2p.c")
    for mpi, cc in (("openmpi", "mpicc.openmpi"), ("mpich", "mpicc.mpich")):
        if mpi not in peers:
            continue
        binaries[mpi] = build_with(cc, src, os.path.join(a.out, f"osu_p2p.{mpi}"))
    columns, names = {}, {}
    for t in transports:
        if t == "rxe":  # our verbs transport, and our engine over UCX rc_verbs
            tw = tagwire_column("verbs", a.build)
            cols = [tw, Column("tagwire-ucx", t, tw.argv_prefix,
                               dict(ucx_env(t), TAGWIRE_TRANSPORT="ucx"), tw.binary)]
        elif t == "shm":  # our shared memory, our engine over UCX's, and the floor
            tw = tagwire_column(t, a.build)
            cols = [tw, Column("tagwire-ucx", t, tw.argv_prefix,
                               dict(ucx_env(t), TAGWIRE_TRANSPORT="ucx"), tw.binary),
                    FloorColumn(a.build)]
        else:
            cols = [tagwire_column(t, a.build)]
        if "openmpi" in peers:
            cols += openmpi_columns(t, binaries["openmpi"])
        if "mpich" in peers:
            cols.append(mpich_column(t, binaries["mpich"]))
        columns[t] = cols
        names[t] = [c.name for c in cols]
        if "perftest" in peers:
            names[t] += (["ib_write_lat", "ib_read_bw", "ib_write_bw", "ib_atomic_lat",
                          "ib_read_lat"]
                         if t == "rxe" else ["ucx_perftest"])
    started = time.monotonic()
    for _ in range(a.load):
        LOAD.append(subprocess.Popen([sys.executable, "-c", "while True: pass"]))
    if LOAD:
        log(f"{len(LOAD)} busy processes load the machine")
    osu_iters = {k: int(v) for k, v in (p.split("=") for p in a.osu_iters.split(",") if p)}
    try:
        results = measure(columns, transports, tests, sizes_for, a.reps, a.timeout,
                          "perftest" in peers, osu_iters)
    finally:
        for p in LOAD:
            p.kill()
    extra = []
    if a.cancel:
        extra = cancel_rows(a, transports, results)
    if a.crowd:
        extra += crowd_rows(a)
    if a.flood:
        extra += flood_rows(a, transports)
    if a.collectives:
        extra += collective_rows(a)
    table = write_table(results, transports, tests, names, a.reps, extra,
                        os.path.join(a.out, "results.md"))
    with open(os.path.join(a.out, "results.json"), "w") as f:
        json.dump({f"{k[0]} {k[1]} {k[2]}": v for k, v in results.items()}, f, indent=1)
    pngs = [p for p in (plot(results, tr, t, names[tr], a.out) for tr in transports
                        for t in tests) if p]
    print(table)
    print(f"\n{time.monotonic() - started:.0f} s; table: {os.path.join(a.out, 'results.md')}; "
          f"plots: {', '.join(pngs) if pngs else 'none'}")


def crowd_rows(a):
    """bench/mpi/alltoall_any with a.crowd ranks on this machine's cores: Tagwire
    on its shared memory and on UCX's, and Open MPI (vader), interleaved."""
    src = os.path.join(ROOT, "bench", "mpi", "alltoall_any.c")
    ompi = build_with("mpicc.openmpi", src, os.path.join(a.out, "alltoall_any.openmpi"))
    run = [os.path.join(a.build, "tools", "tagwire-run"), "-n", str(a.crowd)]
    ours = os.path.join(a.build, "bench", "alltoall_any")
    cols = [("tagwire", run + [ours], tagwire_env("shm")),
            ("tagwire-ucx", run + [ours], dict(ucx_env("shm"), TAGWIRE_TRANSPORT="ucx")),
            ("openmpi-vader", ["mpirun.openmpi", "--allow-run-as-root", "--oversubscribe",
                               "-np", str(a.crowd), "--mca", "pml", "ob1", "--mca", "btl",
                               "self,vader", ompi], {})]
    seconds = {name: [] for name, _, _ in cols}
    for rep in range(a.reps):
        for name, argv, env in cols:
            f = run_extra(name, "alltoall_any", rep, argv, env, a.timeout, lambda f: len(f) >= 7)
            if f is None:
                continue
            seconds[name].append(float(f[5]))
            log(f"    crowd {name:15s} {f[5]} s")
    if not seconds["tagwire"]:
        return []
    tw, spread = summary(seconds["tagwire"])
    peer = seconds["openmpi-vader"]
    ucx = seconds["tagwire-ucx"]
    ratio = f"{tw / summary(peer)[0]:.2f}" if peer else "-"
    return [f"| shm | all-to-all, {a.crowd} ranks, wildcards (s) | {fmt(tw)} ±{spread:.0%} | "
            f"{fmt(summary(peer)[0]) + ' (openmpi-vader)' if peer else '-'} | {ratio} | "
            f"tagwire-ucx {fmt(summary(ucx)[0]) if ucx else '-'} | - |"]


def collective_rows(a):
    """bench/mpi/coll_latency with each of a.collectives' rank counts on this
    machine's shared memory: Tagwire as TAGWIRE_COLLECTIVES=auto chooses
    (flat through the root when the ranks outnumber the cores) and forced to
    the binomial tree, Open MPI (vader) and MPICH, interleaved. A row per
    rank count, operation and size, microseconds per call."""
    src = os.path.join(ROOT, "bench", "mpi", "coll_latency.c")
    ours = os.path.join(a.build, "bench", "coll_latency")
    peers = a.peers.split()
    ompi = (build_with("mpicc.openmpi", src, os.path.join(a.out, "coll_latency.openmpi"))
            if "openmpi" in peers else None)
    mpich = (build_with("mpicc.mpich", src, os.path.join(a.out, "coll_latency.mpich"))
             if "mpich" in peers else None)
    ops = a.collective_ops.split(",")
    expected = len(ops) * len(a.collective_sizes.split(","))
    args = ["1000", a.collective_ops, a.collective_sizes]

    def columns(n):
        run = [os.path.join(a.build, "tools", "tagwire-run"), "-n", n]
        cols = [("tagwire", run + [ours], tagwire_env("shm")),
                ("tagwire-tree", run + [ours],
                 dict(tagwire_env("shm"), TAGWIRE_COLLECTIVES="tree"))]
        if ompi:
            cols.append(("openmpi-vader", ["mpirun.openmpi", "--allow-run-as-root",
                                           "--oversubscribe", "-np", n, "--mca", "pml", "ob1",
                                           "--mca", "btl", "self,vader", ompi], {}))
        if mpich:
            genv = [x for k, v in ucx_env("shm").items() for x in ("-genv", k, v)]
            cols.append(("mpich", ["mpirun.mpich", "-np", n] + genv + [mpich], {}))
        return cols

    def points(f):  # "op bytes us" triples among the output's fields
        return [(f[i], int(f[i + 1]), float(f[i + 2])) for i in range(len(f) - 2)
                if f[i] in ops and f[i + 1].isdigit()]

    counts = [c for c in a.collectives.split(",") if c]
    got = {}  # (ranks, op, bytes) -> name -> [us]
    for rep in range(a.reps):
        for n in counts:
            for name, argv, env in columns(n):
                f = run_extra(name, f"coll_latency at {n} ranks", rep, argv + args, env,
                              a.timeout, lambda f: len(points(f)) == expected)
                if f is None:
                    continue
                for op, size, us in points(f):
                    got.setdefault((int(n), op, size), {}).setdefault(name, []).append(us)
                log(f"    collectives {n} ranks {name:15s} done")
    rows = []
    for (n, op, size), by in sorted(got.items()):
        tw = by.get("tagwire")
        if not tw:
            continue
        med, spread = summary(tw)
        others = [(summary(v)[0], k) for k, v in by.items() if k not in ("tagwire", "tagwire-tree")]
        best = min(others) if others else None
        tree = by.get("tagwire-tree")
        column = "; ".join(f"{fmt(v)} ({k})" for v, k in sorted(others)) or "-"
        rows.append(f"| shm | {op} {size} B, {n} ranks (us) | {fmt(med)} ±{spread:.0%} | "
                    f"{column} | {f'{med / best[0]:.2f}' if best else '-'} | "
                    f"tree {fmt(summary(tree)[0]) if tree else '-'} | - |")
    return rows


def flood_rows(a, transports):
    """bench/mpi/flood: a.flood 8-byte messages to a receiver that sleeps 5 s
    outside the library, on each transport, Tagwire and the MPI peers
    interleaved. Two rows per transport: the receiver's peak RSS (what it
    held while asleep: lower is better) and the job's seconds."""
    src = os.path.join(ROOT, "bench", "mpi", "flood.c")
    binaries = {"tagwire": os.path.join(a.build, "bench", "flood")}
    for mpi, cc in (("openmpi", "mpicc.openmpi"), ("mpich", "mpicc.mpich")):
        if mpi in a.peers.split():
            binaries[mpi] = build_with(cc, src, os.path.join(a.out, f"flood.{mpi}"))
    args = [str(a.flood), "8", "5"]
    rows = []
    for t in [t for t in transports if t in ("shm", "tcp")]:
        cols = [tagwire_column(t, a.build)]
        if "openmpi" in binaries:
            cols += openmpi_columns(t, binaries["openmpi"])
        if "mpich" in binaries:
            cols.append(mpich_column(t, binaries["mpich"]))
        got = {c.name: ([], []) for c in cols}  # seconds, receiver RSS (MiB)
        for rep in range(a.reps):
            for c in cols:
                binary = binaries["tagwire"] if c.name == "tagwire" else c.binary
                f = run_extra(c.name, f"flood over {t}", rep, c.argv_prefix + [binary] + args,
                              c.env, a.timeout, lambda f: len(f) >= 7 and f[0] == "flood")
                if f is None:
                    continue
                got[c.name][0].append(float(f[2]))
                got[c.name][1].append(float(f[4]))
                log(f"    flood {t} {c.name:15s} {f[2]} s, receiver {f[4]} MiB")
        for what, i, unit in (("receiver peak RSS", 1, "MiB"), ("time", 0, "s")):
            tw = got["tagwire"][i]
            peers = [(summary(v[i])[0], n) for n, v in got.items() if n != "tagwire" and v[i]]
            if not tw:
                continue
            med, spread = summary(tw)
            best = min(peers) if peers else None
            # Every peer in the peer column, the best first.
            column = "; ".join(f"{fmt(v)} ({n})" for v, n in sorted(peers)) or "-"
            rows.append(f"| {t} | flood {a.flood} x 8 B, receiver asleep 5 s: {what} ({unit}) | "
                        f"{fmt(med)} ±{spread:.0%} | {column} | "
                        f"{f'{med / best[0]:.2f}' if best else '-'} | - | - |")
    return rows


def cancel_rows(a, transports, results):
    """Cancel + Wait of an unmatched eager send against the 8-byte latency of the
    same run. No peer column: Open MPI, MPICH and UCX cannot cancel a send."""
    rows = []
    for t in transports:
        lat = results.get((t, "latency", "tagwire"), {}).get(8)
        if not lat:
            continue
        env = dict(os.environ, **tagwire_env(t if t != "rxe" else "verbs"))
        values = []
        for _ in range(a.reps):
            out = subprocess.run([os.path.join(a.build, "tools", "tagwire-run"), "-n", "2",
                                  os.path.join(a.build, "bench", "cancel_bench"), "1000"],
                                 env=env, capture_output=True, text=True, timeout=a.timeout,
                                 check=True)
            for line in out.stdout.splitlines():
                f = line.split()
                if f and f[0] == "8":
                    values.append(float(f[1]))
        med, spread = summary(values)
        ratio = med / summary(lat)[0]
        rows.append(f"| {t} | Cancel + Wait, unmatched 8 B send (us) | {fmt(med)} ±{spread:.0%}"
                    f" | cannot cancel | {ratio:.1f} x latency | - |")
    return rows


if __name__ == "__main__":
    main()
