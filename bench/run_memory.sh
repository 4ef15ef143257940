#!/bin/sh
# run_memory.sh: memory and disk against issue 15's targets (numbers, not pass/fail).
#
#   bench/run_memory.sh XFERPROF LIBXFERPROF STUB_DIR BENCH_OVERHEAD MAKE_DB [COPIES]
#
# (meson test -C BUILD --benchmark -v memory passes the first five.)
#
# On the stub runtime (STUB_DIR/libcudart.so.13: calls return at once, so what
# grows is the preload's), `bench_overhead time N 1` makes COPIES (default
# 1 000 000) cudaMemcpyAsync calls (8 bytes, pinned -> device, from 32 frames;
# N = COPIES / 1.1 because the warm-up makes N / 10 + 1 more) and 1 001
# stream synchronizations, and exits cleanly.  A sampler (python, every
# SAMPLE_MS = 50 ms) starts the program under /usr/bin/time, reads the
# program's /proc/PID/status and st_blocks of DB.xpj, and keeps
# /proc/PID/smaps at the highest VmRSS it saw; the peak RSS is /usr/bin/time's
# %M (ru_maxrss, the kernel's high-water mark, which no sampling interval can
# miss).  Why through /usr/bin/time: ru_maxrss also counts the memory of the
# process that forked before the exec (the kernel keeps the larger of the two
# at exec), which would be python's 14 MiB; /usr/bin/time's is about 1 MiB,
# the floor of every figure here.  Measured:
#   - the program's peak RSS without and with the preload (LD_PRELOAD and
#     XFERPROF_OUTPUT set by hand, as `xferprof run` does, so the measured
#     process is the program itself), twice with it; the mappings that held
#     the RSS at the sampled peak;
#   - the journal's blocks on disk while it runs, and whether it is gone after
#     the exit;
#   - wall time, CPU time and peak RSS (/usr/bin/time) of `xferprof report`
#     (text, to /dev/null), `xferprof diff` of the two runs and `xferprof
#     export` (Perfetto JSON and protobuf, to a file) on those runs;
#   - at scale (SCALE=0 skips it; skipped with a message when the machine has
#     less than 6 GiB of memory available or 4 GiB of disk in STUB_DIR):
#     report, diff and export (protobuf) on 10 M copies, export on 2 M
#     (protobuf, and JSON gzipped), databases from make_db (synthetic journal
#     through the real writer and ingest), kept in STUB_DIR
#     (report-10000000.db is run_report.sh's) for later runs.  Each command's
#     output size is printed after its figures.
#
# Targets (issue 15):
#   1 M tiny copies add <= 32 MiB to the program's peak RSS
#   the journal on disk stays <= 64 MiB during the run, and is gone after a clean exit
#   `xferprof report` of that run peaks <= 96 MiB
set -eu

if [ $# -lt 5 ]; then
    echo "usage: $0 XFERPROF LIBXFERPROF STUB_DIR BENCH_OVERHEAD MAKE_DB [COPIES]" >&2
    exit 2
fi
XP=$1 LIB=$(realpath "$2") STUB=$3 BENCH=$4 MAKE_DB=$5
COPIES=${6:-1000000}
SAMPLE_MS=${SAMPLE_MS:-50}
SCALE=${SCALE:-1}
# bench_overhead time N 1 makes N + N / 10 + 1 copies.
N=$(((COPIES - 1) * 10 / 11))
MADE=$((N + N / 10 + 1))

unset LD_PRELOAD XFERPROF_OUTPUT XFERPROF_STACK_DEPTH XFERPROF_QUIET XFERPROF_FINGERPRINT
export LD_LIBRARY_PATH="$STUB"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/xpmemory.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM

# The sampler: sample.py OUT JOURNAL CMD...  runs CMD, samples every
# SAMPLE_MS, writes shell assignments to OUT and the mappings that held the
# RSS at the sampled peak to OUT.smaps.
cat >"$tmp/sample.py" <<'EOF'
import os, re, subprocess, sys, time

out, journal, cmd = sys.argv[1], sys.argv[2], sys.argv[3:]
interval = int(os.environ.get("SAMPLE_MS", "50")) / 1000.0

def status(pid):
    f = {}
    try:
        with open("/proc/%d/status" % pid) as s:
            for line in s:
                k, _, v = line.partition(":")
                if k in ("VmRSS", "RssAnon", "RssFile", "RssShmem"):
                    f[k] = int(v.split()[0])
    except OSError:
        pass
    return f

def smaps(pid):
    """KiB of RSS per mapping name (a file's path, [heap], [stack], or
    [anon] for unnamed private memory) and permissions (rw-s: the journal
    writer's chunks; r--s: the ingest's read-only view of the same file),
    and the number of mappings; and the PSS in all (a page mapped twice
    counts once)."""
    by, n, name, pss = {}, {}, None, 0
    try:
        with open("/proc/%d/smaps" % pid) as s:
            for line in s:
                if re.match(r"^[0-9a-f]+-[0-9a-f]+ ", line):
                    parts = line.split(None, 5)
                    name = (parts[5].strip() if len(parts) > 5 else "[anon]") + " " + parts[1]
                    n[name] = n.get(name, 0) + 1
                elif line.startswith("Rss:"):
                    by[name] = by.get(name, 0) + int(line.split()[1])
                elif line.startswith("Pss:"):
                    pss += int(line.split()[1])
    except OSError:
        return None
    return by, n, pss

def child(pid):
    """/usr/bin/time's child: the program (0 until it has forked)."""
    try:
        with open("/proc/%d/task/%d/children" % (pid, pid)) as c:
            kids = c.read().split()
    except OSError:
        return 0
    return int(kids[0]) if kids else 0

t0 = time.monotonic()
p = subprocess.Popen(["/usr/bin/time", "-f", "%M", "-o", out + ".maxrss"] + cmd,
                     stdout=subprocess.DEVNULL)
prog = 0
peak, peak_at, peak_fields, peak_maps = 0, 0.0, {}, None
jpeak, jsize, jsamples, samples = 0, 0, 0, 0
while True:
    if p.poll() is not None:
        rc = p.returncode
        break
    prog = prog or child(p.pid)
    samples += 1
    f = status(prog) if prog else {}
    rss = f.get("VmRSS", 0)
    if rss > peak:
        m = smaps(prog)
        if m is not None:
            peak, peak_at, peak_fields, peak_maps = rss, time.monotonic() - t0, f, m
    try:
        st = os.stat(journal)
        jsamples += 1
        if st.st_blocks * 512 > jpeak:
            jpeak, jsize = st.st_blocks * 512, st.st_size
    except FileNotFoundError:
        pass
    time.sleep(interval)
wall = time.monotonic() - t0
with open(out + ".maxrss") as m:
    maxrss = int(m.read().split()[-1])
with open(out, "w") as o:
    print("rc=%d maxrss_kib=%d wall=%.2f samples=%d" % (rc, maxrss, wall, samples), file=o)
    print("peak_kib=%d peak_at=%.2f anon_kib=%d file_kib=%d shmem_kib=%d pss_kib=%d"
          % (peak, peak_at, peak_fields.get("RssAnon", 0), peak_fields.get("RssFile", 0),
             peak_fields.get("RssShmem", 0), peak_maps[2] if peak_maps else 0), file=o)
    print("jpeak=%d jsize=%d jsamples=%d jafter=%d"
          % (jpeak, jsize, jsamples, 1 if os.path.exists(journal) else 0), file=o)
with open(out + ".smaps", "w") as o:
    if peak_maps:
        by, n, _ = peak_maps
        for name, kib in sorted(by.items(), key=lambda kv: -kv[1])[:6]:
            print("    %8.1f MiB  %4d mapping%s  %s"
                  % (kib / 1024, n[name], "" if n[name] == 1 else "s", name), file=o)
EOF

echo "machine: $(nproc) CPUs, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1), $(awk '/^MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "program: $BENCH time $N 1 on the stub runtime ($MADE copies, 8 bytes pinned -> device, 32 frames); sampled every $SAMPLE_MS ms"

mib() { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }

# profiled NAME [ENV...]: one run of the program under the sampler, with ENV;
# leaves $tmp/NAME.db (when preloaded) and the sampler's figures in $tmp/NAME.
profiled() {
    name=$1
    shift
    SAMPLE_MS="$SAMPLE_MS" python3 "$tmp/sample.py" "$tmp/$name" "$tmp/$name.db.xpj" \
        env "$@" "$BENCH" time "$N" 1
    # The sampler's figures (see its last lines).
    rc=1 maxrss_kib=0 wall=0 peak_kib=0 peak_at=0 anon_kib=0 file_kib=0 shmem_kib=0 pss_kib=0
    jpeak=0 jsize=0 jsamples=0 jafter=0
    # shellcheck disable=SC1090
    . "$tmp/$name"
    if [ "$rc" != 0 ]; then
        echo "$0: $name: the program exited with $rc" >&2
        exit 1
    fi
    printf '  %-9s peak RSS %7s MiB (ru_maxrss); sampled peak %s MiB at %s s of %s s (anon %s, file %s, shmem %s; PSS %s MiB)\n' \
        "$name" "$(mib "$maxrss_kib")" "$(mib "$peak_kib")" "$peak_at" "$wall" \
        "$(mib "$anon_kib")" "$(mib "$file_kib")" "$(mib "$shmem_kib")" "$(mib "$pss_kib")"
}

echo
echo "the profiled program:"
profiled none
base=$maxrss_kib
# Peak RSS added and the journal's peak, the worst of the two preloaded runs.
added=0 jworst=0 jleft=0
for run in run1 run2; do
    rm -f "$tmp/$run.db"
    profiled $run LD_PRELOAD="$LIB" XFERPROF_OUTPUT="$tmp/$run.db"
    echo "            journal on disk: peak $(mib $((jpeak / 1024))) MiB in blocks (file size $(mib $((jsize / 1024))) MiB; $jsamples samples saw it); after exit: $([ "$jafter" = 1 ] && echo "STILL THERE" || echo gone)"
    n=$(python3 -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT count(*) FROM copies").fetchone()[0])' "$tmp/$run.db")
    echo "            database: $(wc -c <"$tmp/$run.db") bytes, $n copies"
    if [ "$n" != "$MADE" ]; then
        echo "$0: $run recorded $n of the $MADE copies: not the same work" >&2
        exit 1
    fi
    a=$((maxrss_kib - base))
    [ $a -gt $added ] && added=$a && cp "$tmp/$run.smaps" "$tmp/worst.smaps"
    [ "$jpeak" -gt "$jworst" ] && jworst=$jpeak
    [ "$jafter" = 1 ] && jleft=1
done
echo "  where the RSS was at the sampled peak (the run with the most added), largest mappings:"
cat "$tmp/worst.smaps"

# timed LABEL CMD...: wall, CPU and peak RSS of CMD (output to /dev/null);
# leaves the peak in KiB in $peak_rss.
timed() {
    label=$1
    shift
    /usr/bin/time -f '%e %U %S %M' -o "$tmp/t" "$@" >/dev/null || {
        echo "$0: $label failed" >&2
        exit 1
    }
    read -r w u s m <"$tmp/t"
    peak_rss=$m
    printf '  %-44s %7.2f s wall (%6.2f s user + %5.2f s sys)  peak RSS %7s MiB\n' \
        "$label" "$w" "$u" "$s" "$(mib "$m")"
}

# exported LABEL DB FORMAT FILE: timed export of DB to $tmp/FILE, its size
# printed after; the file removed (2 M copies in JSON are ~845 MB).
exported() {
    timed "$1" "$XP" export "$2" --format "$3" -o "$tmp/$4"
    echo "  $(printf '%-44s' '')   output $(wc -c <"$tmp/$4") bytes"
    rm -f "$tmp/$4"
}

echo
echo "the analyzer on those runs ($MADE copies each):"
timed "xferprof report run1" "$XP" report "$tmp/run1.db"
report_peak=$peak_rss
timed "xferprof diff run1 run2" "$XP" diff "$tmp/run1.db" "$tmp/run2.db"
exported "xferprof export run1 (perfetto JSON)" "$tmp/run1.db" perfetto out.json
exported "xferprof export run1 (perfetto protobuf)" "$tmp/run1.db" proto out.pftrace

if [ "$SCALE" = 0 ]; then
    echo
    echo "at scale: skipped (SCALE=0)"
else
    avail=$(awk '/^MemAvailable/ { print int($2 / 1048576) }' /proc/meminfo)
    disk=$(df -Pk "$STUB" | awk 'NR == 2 { print int($4 / 1048576) }')
    echo
    if [ "$avail" -lt 6 ] || [ "$disk" -lt 4 ]; then
        echo "at scale: skipped ($avail GiB of memory available, $disk GiB of disk; needs 6 and 4)"
    else
        echo "at scale (make_db databases in $STUB, made once and kept):"
        # db COPIES SEED: the path of a make_db database, made if missing.
        db() {
            p=$STUB/report-$1.db
            [ "$2" = 1 ] || p=$STUB/memory-$1-seed$2.db
            [ -f "$p" ] || "$MAKE_DB" -n "$1" --seed "$2" "$p" >/dev/null
            echo "$p"
        }
        a=$(db 10000000 1) b=$(db 10000000 2) c=$(db 2000000 1)
        timed "xferprof report, 10 M copies" "$XP" report "$a"
        timed "xferprof diff, 10 M vs 10 M copies" "$XP" diff "$a" "$b"
        exported "xferprof export, 10 M copies (protobuf)" "$a" proto out.pftrace
        exported "xferprof export, 2 M copies (protobuf)" "$c" proto out.pftrace
        exported "xferprof export, 2 M copies (JSON, .gz)" "$c" perfetto out.json.gz
    fi
fi

# target WHAT VALUE_KIB LIMIT_MIB: met, or missed by how much.
target() {
    awk -v what="$1" -v k="$2" -v lim="$3" 'BEGIN {
        v = k / 1024
        printf "  %-52s %8.1f MiB (target <= %d): ", what, v, lim
        if (v <= lim) printf "met (%.1f MiB to spare)\n", lim - v
        else printf "MISSED by %.1f MiB (%.1f x the target)\n", v - lim, v / lim
    }'
}
echo
echo "targets (issue 15; $MADE copies):"
target "peak RSS added to the program" "$added" 32
target "journal on disk during the run (blocks)" $((jworst / 1024)) 64
echo "  $(printf '%-52s' "journal after a clean exit") $([ $jleft = 0 ] && echo "gone: met" || echo "still there: MISSED")"
target "xferprof report peak RSS" "$report_peak" 96
