// The C face of Drover's libtorch shim (shim.cc): just what agents/nn
// trains with, over opaque handles. Every function that can fail returns
// 0 on success and -1 on failure, with the reason in drv_last_error()
// (per thread, valid until the next failing call on that thread).
#ifndef DROVER_TORCH_SHIM_H
#define DROVER_TORCH_SHIM_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct drv_net drv_net;
typedef struct drv_opt drv_opt;

// Layer kinds of drv_net_new's kinds array.
enum { DRV_LINEAR = 0, DRV_TANH = 1, DRV_RELU = 2 };

const char *drv_last_error(void);
const char *drv_version(void);
int drv_cuda_device_count(void);
void drv_set_num_threads(int n);

// drv_check_device checks that device ("cpu", "cuda", "cuda:N") is usable.
int drv_check_device(const char *device);

// drv_net_new builds a network of nlayers layers; linear layer i takes
// dims[2i] inputs to dims[2i+1] outputs (one pair per linear layer, in
// order). Parameters (weight [out, in], then bias [out], per linear layer)
// start at zero with zero gradients; set them with drv_net_set_param.
drv_net *drv_net_new(int nlayers, const int *kinds, const int64_t *dims, const char *device);
void drv_net_free(drv_net *n);
int drv_net_nparams(drv_net *n);
int drv_net_set_param(drv_net *n, int i, const float *src, int64_t len);
int drv_net_get_param(drv_net *n, int i, float *dst, int64_t len);
int drv_net_get_grad(drv_net *n, int i, float *dst, int64_t len);
// drv_net_forward computes the output of rows x cols input x into out
// (rows x outputs) and keeps the graph for drv_net_backward.
int drv_net_forward(drv_net *n, const float *x, int64_t rows, int64_t cols, float *out, int64_t outlen);
// drv_net_backward backpropagates dL/d(output) dy (the last forward's
// shape), accumulating the parameters' gradients.
int drv_net_backward(drv_net *n, const float *dy, int64_t len);
int drv_net_zero_grad(drv_net *n);

// drv_adam_new returns Adam over the parameters of nets, in order.
drv_opt *drv_adam_new(drv_net **nets, int nnets, double lr, double eps);
void drv_opt_free(drv_opt *o);
int drv_opt_set_lr(drv_opt *o, double lr);
int drv_opt_step(drv_opt *o);
// drv_opt_clip_grad_norm clips the optimiser's parameters' gradients to a
// global 2-norm of max_norm and stores the norm before clipping in total.
int drv_opt_clip_grad_norm(drv_opt *o, double max_norm, double *total);

#ifdef __cplusplus
}
#endif

#endif
