"""Device placement across ranks (finding device-placement): rep_placement
run as 4 ranks of one job (RANK and LOCAL_RANK 0..3, XFERPROF_SIM_DEVICES=4),
each writing DIR/rank%r.db, then `xferprof report DIR`:
(a) no cudaSetDevice: the 4 ranks used one GPU, the finding names them and its UUID;
(b) cudaSetDevice(LOCAL_RANK): 4 GPUs, quiet;
(c) each rank launched with CUDA_VISIBLE_DEVICES=k, using ordinal 0: quiet;
(d) all launched with CUDA_VISIBLE_DEVICES=0: one GPU again, the finding fires.
The databases' meta say what the process saw: cuda_visible_devices,
local_rank and the UUID of each ordinal used (device_uuid.N)."""
import os
import re

from rep_common import *  # noqa: F401,F403

RANKS = 4
UUID = re.compile(r'^GPU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$')

args = parse_args()


def job(tag, mode, visible):
    """Runs the 4 ranks; visible(k) is rank k's CUDA_VISIBLE_DEVICES (None:
    unset).  Returns the folder and each rank's meta."""
    d = tmpdir('placement-' + tag)
    metas = []
    for k in range(RANKS):
        env = {'RANK': str(k), 'LOCAL_RANK': str(k), 'XFERPROF_SIM_DEVICES': str(RANKS),
               'CUDA_VISIBLE_DEVICES': visible(k)}
        r = run([args.xferprof, 'run', '--sim', '-o', os.path.join(d, 'rank%r.db'), '--',
                 args.prog, mode], clean_env(env))
        if r.rc != 0:
            fatal('%s: rank %d under xferprof run --sim' % (tag, k), r.describe())
        conn = open_db(os.path.join(d, 'rank%d.db' % k))
        m = meta(conn)
        conn.close()
        check_eq(m.get('local_rank'), str(k), '%s rank %d: meta local_rank' % (tag, k))
        check_eq(m.get('cuda_visible_devices'), visible(k),
                 '%s rank %d: meta cuda_visible_devices' % (tag, k))
        uuids = {key: v for key, v in m.items() if key.startswith('device_uuid.')}
        check_eq(sorted(uuids), ['device_uuid.%d' % (k if mode == 'setdevice' else 0)],
                 '%s rank %d: a UUID for the one ordinal used' % (tag, k))
        for v in uuids.values():
            check(UUID.match(v), '%s rank %d: UUID as nvidia-smi writes it' % (tag, k), v)
        metas.append(m)
    return d, metas


def placement(d):
    doc = report_json(args, [d])
    check_eq(len(doc['processes']), RANKS, 'report of the folder %s: every rank' % d)
    return [f for f in doc['findings'] if f['rule'] == 'device-placement']


def expect_one_gpu(tag, d, metas):
    found = placement(d)
    if not check_eq(len(found), 1, '%s: one device-placement finding' % tag):
        return
    f = found[0]
    uuid = metas[0]['device_uuid.0']
    check_eq(f['severity'], 'warning', tag + ': severity')
    check_eq(f['details'].get('rank_count'), RANKS, tag + ': the ranks sharing the GPU')
    # Each rank: one allocation, one upload, one download of 1 MiB.
    check_eq(f['count'], 3 * RANKS, tag + ': calls on the shared GPU')
    check_eq(f['bytes'], 3 * RANKS << 20, tag + ': bytes on the shared GPU')
    check_eq(f['details'].get('ranks'), '0,1,2,3', tag + ': ranks named')
    check_eq(f['details'].get('uuid'), uuid, tag + ': the GPU named by its UUID')
    check('%d ranks' % RANKS in f['message'] and uuid in f['message'],
          tag + ': message names the ranks and the GPU', f['message'])
    check('set_device(local_rank)' in (f['fix_pytorch'] or ''), tag + ': PyTorch fix', f)
    check('cudaSetDevice(local_rank)' in f['fix'], tag + ': CUDA fix', f)
    check(f['site']['frames'] and f['site']['frames'][0]['function'] == 'main',
          tag + ': the site is where a rank used the GPU', f['site'])


# (a) Forgotten cudaSetDevice: all on one GPU.
d, metas = job('forget', 'forget', lambda k: None)
check_eq(len({m['device_uuid.0'] for m in metas}), 1, 'forget: one UUID across ranks')
expect_one_gpu('forget', d, metas)
text = report(args, [d])
check('device-placement' in text.out, 'forget: the text report shows the finding', text.out[-3000:])

# (b) cudaSetDevice(LOCAL_RANK): four GPUs.
d, metas = job('setdevice', 'setdevice', lambda k: None)
check_eq(len({m['device_uuid.%d' % k] for k, m in enumerate(metas)}), RANKS,
         'setdevice: four UUIDs')
check_eq(placement(d), [], 'setdevice: no device-placement finding')

# (c) The launcher's way: one visible GPU per rank, ordinal 0 in each.
d, metas = job('visible', 'ordinal0', lambda k: str(k))
check_eq(len({m['device_uuid.0'] for m in metas}), RANKS, 'visible: four UUIDs')
check_eq(placement(d), [], 'visible=k: no device-placement finding')

# (d) Every rank restricted to the same GPU.
d, metas = job('visible0', 'ordinal0', lambda k: '0')
expect_one_gpu('visible0', d, metas)

finish()
