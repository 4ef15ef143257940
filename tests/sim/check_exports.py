#!/usr/bin/env python3
"""Checks the simulator's libraries export what NVIDIA's do, and nothing else.

usage: check_exports.py SIM_LIBCUDART SIM_LIBCUDA CUDART_EXPORTS.txt CUDA_EXPORTS.txt
                        [REAL_LIBCUDART [REAL_LIBCUDA_STUB]]

A program linked against NVIDIA's toolkit binds each runtime symbol with
version libcudart.so.13 and finds both libraries by SONAME, so a missing name,
a missing version or a wrong SONAME stops it from starting at all; an extra
export could capture a symbol of the program or of another library.
"""
import re
import subprocess
import sys

failures = []


def fail(msg):
    failures.append(msg)
    print('FAIL: ' + msg, file=sys.stderr)


def readelf(*args):
    return subprocess.run(['readelf', *args], check=True, capture_output=True,
                          text=True).stdout


def soname(path):
    m = re.search(r'\(SONAME\)\s+Library soname: \[([^\]]+)\]', readelf('-d', '-W', path))
    return m.group(1) if m else None


def needed(path):
    return re.findall(r'\(NEEDED\)\s+Shared library: \[([^\]]+)\]', readelf('-d', '-W', path))


def defined_exports(path):
    """{name: version or None} of the defined global/weak dynamic symbols."""
    out = {}
    for line in readelf('--dyn-syms', '-W', path).splitlines():
        f = line.split()
        # Num: Value Size Type Bind Vis Ndx Name
        if len(f) < 8 or not f[0].endswith(':') or not f[0][:-1].isdigit():
            continue
        bind, vis, ndx, name = f[4], f[5], f[6], f[7]
        if ndx == 'UND' or bind not in ('GLOBAL', 'WEAK') or vis not in ('DEFAULT', 'PROTECTED'):
            continue
        version = None
        if '@' in name:
            name, _, version = name.partition('@')
            version = version.lstrip('@')
        out[name] = version
    return out


def listed(path):
    with open(path) as f:
        return [l.strip() for l in f if l.strip() and not l.startswith('#')]


def main():
    if len(sys.argv) < 5:
        print(__doc__, file=sys.stderr)
        return 2
    sim_rt, sim_drv, rt_list, drv_list = sys.argv[1:5]
    real_rt = sys.argv[5] if len(sys.argv) > 5 else None
    real_drv = sys.argv[6] if len(sys.argv) > 6 else None

    if soname(sim_rt) != 'libcudart.so.13':
        fail('%s: SONAME %r, expected libcudart.so.13' % (sim_rt, soname(sim_rt)))
    if soname(sim_drv) != 'libcuda.so.1':
        fail('%s: SONAME %r, expected libcuda.so.1' % (sim_drv, soname(sim_drv)))
    # NVIDIA's runtime dlopen()s the driver instead of linking it; so must the
    # simulator's, or a program could not pick its driver at run time.
    if 'libcuda.so.1' in needed(sim_rt):
        fail('%s links libcuda.so.1 directly (NEEDED); the runtime must dlopen it' % sim_rt)

    rt = defined_exports(sim_rt)
    drv = defined_exports(sim_drv)

    want_rt = listed(rt_list)
    want_drv = listed(drv_list)
    if len(want_rt) < 300 or len(want_drv) < 400:
        fail('export lists look truncated: %d runtime, %d driver names' %
             (len(want_rt), len(want_drv)))

    def check_runtime(names, source):
        missing = [n for n in names if n not in rt]
        if missing:
            fail('%s lacks %d runtime names from %s, e.g. %s' %
                 (sim_rt, len(missing), source, ' '.join(missing[:8])))
        unversioned = [n for n in names if n in rt and rt[n] != 'libcudart.so.13']
        if unversioned:
            fail('%s exports %d runtime names without version libcudart.so.13, e.g. %s' %
                 (sim_rt, len(unversioned),
                  ' '.join('%s@%s' % (n, rt[n]) for n in unversioned[:8])))

    def check_driver(names, source):
        missing = [n for n in names if n not in drv]
        if missing:
            fail('%s lacks %d driver names from %s, e.g. %s' %
                 (sim_drv, len(missing), source, ' '.join(missing[:8])))

    check_runtime(want_rt, rt_list)
    check_driver(want_drv, drv_list)
    # Against NVIDIA's own binaries too, so a stale list cannot hide a gap.
    if real_rt:
        real = [n for n, v in defined_exports(real_rt).items() if v == 'libcudart.so.13'
                and n != 'libcudart.so.13']
        check_runtime(real, real_rt)
    if real_drv:
        check_driver(list(defined_exports(real_drv)), real_drv)

    # Nothing else: the simulator's internals are hidden.
    version_nodes = {'libcudart.so.13'}
    linker_names = {'_init', '_fini'}
    extra_rt = sorted(n for n in rt if n not in version_nodes and n not in linker_names and
                      not (n.startswith('cuda') or n.startswith('__cuda')))
    if extra_rt:
        fail('%s exports %d names outside cuda*/__cuda*: %s' %
             (sim_rt, len(extra_rt), ' '.join(extra_rt[:20])))
    extra_drv = sorted(n for n in drv if n not in linker_names and
                       not (n.startswith('cu') or n.startswith('xpsim')))
    if extra_drv:
        fail('%s exports %d names outside cu*/xpsim*: %s' %
             (sim_drv, len(extra_drv), ' '.join(extra_drv[:20])))

    if failures:
        return 1
    print('ok: %d runtime and %d driver exports checked' % (len(rt), len(drv)))
    return 0


if __name__ == '__main__':
    sys.exit(main())
