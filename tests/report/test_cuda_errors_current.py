"""The committed table of CUDA status names (src/xp_cuda_errors.h) is what
scripts/gen_cuda_errors.py makes from the installed headers: CUDA 13's (the
toolkit, --cuda-include) and CUDA 12's (the nvidia-cuda-runtime-cu12 wheel in
.venv).  And the generator's rules on made-up headers: a code both versions
name takes 13's name, a code only 12 has keeps 12's, an alias keeps the first
name declared."""
import argparse
import difflib
import os
import subprocess
import sys
import tempfile

ap = argparse.ArgumentParser()
ap.add_argument('--source-root', required=True)
ap.add_argument('--cuda-include', required=True)
a = ap.parse_args()
gen = os.path.join(a.source_root, 'scripts', 'gen_cuda_errors.py')
committed = os.path.join(a.source_root, 'src', 'xp_cuda_errors.h')
failed = []

with tempfile.TemporaryDirectory() as tmp:
    out = os.path.join(tmp, 'xp_cuda_errors.h')
    p = subprocess.run([sys.executable, gen, '--cuda-include', a.cuda_include, '-o', out],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if p.returncode != 0:
        failed.append('the generator failed on the installed headers:\n' + p.stdout)
    else:
        with open(committed) as f:
            want = f.read()
        with open(out) as f:
            got = f.read()
        if got != want:
            failed.append('src/xp_cuda_errors.h differs from the installed headers '
                          '(run scripts/gen_cuda_errors.py):\n' + ''.join(difflib.unified_diff(
                              want.splitlines(True), got.splitlines(True), 'committed', 'generated')))

    # The rules, on two made-up versions of both headers.
    v13, v12 = os.path.join(tmp, '13'), os.path.join(tmp, '12')
    headers = {
        v13: ('enum __device_builtin__ cudaError {\n cudaSuccess = 0, /* ok */\n'
              ' cudaErrorNewName = 5,\n cudaErrorAlias13 = 5,\n cudaErrorOnly13 = 0x10\n};\n',
              'typedef enum cudaError_enum {\n CUDA_SUCCESS = 0,\n CUDA_ERROR_X = 7\n} CUresult;\n'),
        v12: ('enum __device_builtin__ cudaError {\n cudaSuccess = 0,\n cudaErrorOldName = 5, // was\n'
              ' cudaErrorRemovedIn13 = 9\n};\n',
              'typedef enum cudaError_enum {\n CUDA_SUCCESS = 0,\n CUDA_ERROR_GONE = 8\n} CUresult;\n'),
    }
    for folder, (rt, drv) in headers.items():
        os.mkdir(folder)
        with open(os.path.join(folder, 'driver_types.h'), 'w') as f:
            f.write(rt)
        with open(os.path.join(folder, 'cuda.h'), 'w') as f:
            f.write(drv)
    out = os.path.join(tmp, 'made_up.h')
    p = subprocess.run([sys.executable, gen, '--cuda-include', v13, '--cuda12-include', v12, '-o', out],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if p.returncode != 0:
        failed.append('the generator failed on made-up headers:\n' + p.stdout)
    else:
        with open(out) as f:
            text = f.read()
        runtime, driver = text.split('XP_CUDA_DRIVER_ERRORS')
        for want, where, what in (
                ('XP_CUDA_ERROR(5, "cudaErrorNewName")', runtime, '13 wins on a shared code'),
                ('XP_CUDA_ERROR(9, "cudaErrorRemovedIn13")', runtime, 'a code only 12 has is kept'),
                ('XP_CUDA_ERROR(16, "cudaErrorOnly13")', runtime, 'hex values'),
                ('XP_CUDA_ERROR(8, "CUDA_ERROR_GONE")', driver, 'the driver layer is a union too'),
                ('XP_CUDA_ERROR(7, "CUDA_ERROR_X")', driver, 'the driver layer has 13\'s codes')):
            if want not in where:
                failed.append('%s: %s not in\n%s' % (what, want, text))
        for unwanted in ('cudaErrorOldName', 'cudaErrorAlias13'):
            if unwanted in text:
                failed.append('%s should have lost to another name of its code:\n%s' % (unwanted, text))
        codes = [int(l.split('(')[1].split(',')[0]) for l in runtime.splitlines() if 'XP_CUDA_ERROR(' in l
                 and l.strip().startswith('XP_CUDA_ERROR(')]
        if codes != sorted(codes):
            failed.append('runtime codes not in increasing order: %r' % codes)

for f in failed:
    print('FAIL: ' + f)
print('ok' if not failed else '%d failed' % len(failed))
sys.exit(1 if failed else 0)
