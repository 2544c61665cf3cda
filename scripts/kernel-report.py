#!/usr/bin/env python3
"""Registers, spills and stack of every lifting kernel, from NVRTC's ptxas report, without a
GPU. Needs libnvrtc.so.13 (the PyPI wheel nvidia-cuda-nvrtc, as in .ci/run):

    LD_LIBRARY_PATH=$HOME/.cache/egsolve-nvrtc/nvidia/cu13/lib \
        python3 scripts/kernel-report.py [--arch sm_90] [--w 16] [--v 32] [NVRTC options...]

e.g. `-DLIFT_BATCH=4 -DLIFT_MIN_BLOCKS=2`: the same options EGSOLVE_NVRTC_EXTRA_OPTIONS
passes at run time. Prints one line per kernel."""
import ctypes, os, re, sys

args = sys.argv[1:]
def take(flag, default):
    if flag in args:
        i = args.index(flag); value = args[i + 1]; del args[i:i + 2]; return value
    return default
arch, w, v = take("--arch", "sm_90"), take("--w", "16"), take("--v", "32")
root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
source = (f"#define LIFT_WB {w}\n#define LIFT_W i{w}\n#define LIFT_VB {v}\n#define LIFT_V u{v}\n"
          + open(os.path.join(root, "kernels", "lift.cu")).read()).encode()
nvrtc = ctypes.CDLL("libnvrtc.so.13")
prog = ctypes.c_void_p()
assert nvrtc.nvrtcCreateProgram(ctypes.byref(prog), source, b"lift.cu", 0, None, None) == 0
options = [f"--gpu-architecture={arch}", "--std=c++17", "--ptxas-options=-v"] + args
c_options = (ctypes.c_char_p * len(options))(*[o.encode() for o in options])
status = nvrtc.nvrtcCompileProgram(prog, len(options), c_options)
size = ctypes.c_size_t()
nvrtc.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
log = ctypes.create_string_buffer(size.value)
nvrtc.nvrtcGetProgramLog(prog, log)
text = log.value.decode(errors="replace")
if status != 0:
    print(text); sys.exit(1)
kernel = None
for line in text.splitlines():
    m = re.search(r"Compiling entry function '(\w+)'", line)
    if m:
        kernel = m.group(1)
    m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", line)
    if m and kernel:
        frame = m.groups()
    m = re.search(r"Used (\d+) registers", line)
    if m and kernel:
        print(f"{kernel:<28} {' '.join(options[3:]) or '(defaults)':<40} regs {m.group(1):>3}  "
              f"stack {frame[0]:>3}  spill st {frame[1]:>3} ld {frame[2]:>3}")
        kernel = None
