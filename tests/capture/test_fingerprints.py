"""Content fingerprints (cap_fingerprints): equal content gives equal
fingerprints and different content different ones, at the default setting
(exact up to 64 KiB, sampled above), with --fingerprint=full and with
XFERPROF_FINGERPRINT=off (read by the preload itself); the copies that get
none (device and managed memory, async D2H, a failed copy); a D2H after a
synchronous copy equal to the H2D of the same bytes; and, where libxxhash can
be loaded, every value as docs/schema.md defines it."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cap_common import *  # noqa: E402,F401,F403
import cap_fp  # noqa: E402

args = parse_args()
d = tmpdir('fingerprints')

BIG, SMALL = 1 << 20, 4096


def pattern(n, seed):
    return bytes(((((i * 2654435761) & 0xffffffff) >> 16) ^ seed) & 0xff for i in range(n))


def flip(buf, off, mask):
    b = bytearray(buf)
    b[off] ^= mask
    return bytes(b)


A, B, MANAGED = pattern(BIG, 1), pattern(SMALL, 2), pattern(SMALL, 3)
INSIDE = cap_fp.sample_offsets(BIG)[5] + 10
# copy number -> the bytes it moved when its fingerprint is known, else None.
content = {
    1: A, 2: A, 3: flip(A, INSIDE, 0xff), 4: flip(A, 300, 0xff), 5: flip(A, BIG - 1, 0xff),
    6: B, 7: B, 8: B, 9: flip(B, 1234, 1), 10: A, 11: None, 12: A[:SMALL], 13: B, 14: None,
    15: None, 16: None, 17: A[:64 * 1024], 18: A[:64 * 1024 + 1], 19: None, 20: B,
}
KNOWN = sum(1 for v in content.values() if v is not None)
directions = {8: 'D2H', 10: 'D2H', 11: 'D2H', 13: 'H2H', 14: 'D2D', 16: 'D2H'}


def run_mode(mode):
    db = os.path.join(d, '%s.db' % mode)
    if mode == 'default':
        r = xferprof_run(args, ['-o', db], [args.prog])
    elif mode == 'off':
        r = manual_run(args, db, [args.prog], {'XFERPROF_FINGERPRINT': 'off'})
    else:
        r = xferprof_run(args, ['-o', db, '--fingerprint=%s' % mode], [args.prog])
    if not expect_rc(r, 0, 'cap_fingerprints (%s)' % mode):
        finish()
    check_eq(parse_int_lines(r.out, 'off_inside'), [INSIDE],
             'the program and the driver agree on a sampled offset')
    conn = open_db(db)
    got = rows(conn, 'SELECT id, api, direction, bytes, status, fingerprint, fingerprint_kind '
                     'FROM copies ORDER BY start_ns, id')
    check_eq(len(got), len(content), '%s: number of copies' % mode)
    check_eq(meta(conn).get('fingerprint'), 'sampled' if mode == 'default' else mode,
             '%s: meta fingerprint' % mode)
    check_eq(meta(conn).get('fingerprint_threshold'), '65536', '%s: meta fingerprint_threshold'
             % mode)
    check_records_lost_zero(conn)
    conn.close()
    fp = {}
    for n, row in enumerate(got, 1):
        what = '%s: copy %d (%s %s %d bytes)' % (mode, n, row['api'], row['direction'],
                                                 row['bytes'])
        check_eq(row['direction'], directions.get(n, 'H2D'), what + ': direction')
        check_eq(row['status'], 1 if n == 19 else 0, what + ': status')
        data = content.get(n)
        if mode == 'off' or data is None:
            check_eq((row['fingerprint'], row['fingerprint_kind']), (None, None),
                     what + ': no fingerprint')
            continue
        want_kind = 'full' if mode == 'full' or len(data) <= cap_fp.THRESHOLD else 'sampled'
        check_eq(row['fingerprint_kind'], want_kind, what + ': fingerprint_kind')
        check(row['fingerprint'] is not None, what + ': fingerprint set')
        fp[n] = u64(row['fingerprint']) if row['fingerprint'] is not None else None
        if cap_fp.have():
            check_eq(hex(fp[n] or 0), hex(cap_fp.expected(data, mode == 'full')[0]),
                     what + ': fingerprint value')
    return fp


fp = run_mode('default')
if len(fp) == KNOWN:
    check(fp[1] == fp[2], '1 MiB uploaded twice unchanged: same fingerprint', fp[1], fp[2])
    check(fp[3] != fp[1], '1 MiB changed inside a sampled block: different', fp[3], fp[1])
    check(fp[4] == fp[1], '1 MiB changed outside every sampled block: the same (sampled)',
          fp[4], fp[1])
    check(fp[5] != fp[1], '1 MiB changed in its last byte: different', fp[5], fp[1])
    check(fp[6] == fp[7], '4 KiB uploaded twice: same fingerprint', fp[6], fp[7])
    check(fp[8] == fp[6], 'D2H after a synchronous copy equals the H2D of the same bytes',
          fp[8], fp[6])
    check(fp[9] != fp[6], '4 KiB with one bit changed: different', fp[9], fp[6])
    check(fp[10] == fp[1], '1 MiB back down: same fingerprint as the upload', fp[10], fp[1])
    check(fp[13] == fp[6] and fp[20] == fp[6],
          'H2H and cudaMemcpyDefault copies of the same bytes: same fingerprint')
    check(fp[17] != fp[18], '64 KiB exact and 64 KiB + 1 sampled differ', fp[17], fp[18])
full = run_mode('full')
if len(full) == KNOWN:
    check(full[4] != full[1], 'full: a change anywhere gives another fingerprint')
    check(full[10] == full[1] and full[2] == full[1], 'full: same bytes, same fingerprint')
    check(full[6] == fp.get(6), 'full and default agree below the threshold')
off = run_mode('off')
check_eq(off, {}, 'off: no fingerprints')
finish()
