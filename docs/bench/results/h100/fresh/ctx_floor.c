// The driver's own cost of a fresh process's CUDA start: cuInit, then the primary context
// of device 0 (retain + set current + a first allocation), then loading NVRTC (dlopen), timed
// with CLOCK_MONOTONIC.
#include <cuda.h>
#include <stdio.h>
#include <time.h>
#include <dlfcn.h>
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
int main(void) {
  double t0 = now();
  if (cuInit(0) != CUDA_SUCCESS) { puts("cuInit failed"); return 1; }
  double t1 = now();
  CUdevice d; cuDeviceGet(&d, 0);
  CUcontext c;
  if (cuDevicePrimaryCtxRetain(&c, d) != CUDA_SUCCESS) { puts("retain failed"); return 1; }
  double t2 = now();
  cuCtxSetCurrent(c);
  CUdeviceptr p; cuMemAlloc(&p, 1 << 20);
  double t3 = now();
  void* nvrtc = dlopen("libnvrtc.so", RTLD_NOW | RTLD_LOCAL);
  if (!nvrtc) nvrtc = dlopen("/usr/local/cuda/lib64/libnvrtc.so", RTLD_NOW | RTLD_LOCAL);
  double t4 = now();
  printf("cuInit %.4f primary_ctx_retain %.4f first_alloc %.4f total %.4f nvrtc_dlopen %.4f%s\n", t1 - t0, t2 - t1, t3 - t2, t3 - t0, t4 - t3, nvrtc ? "" : " (not found)");
  return 0;
}
