//go:build torch

// Drover's libtorch shim: a C API (shim.h) over libtorch's C++ API for
// the networks agents/nn trains. Errors are caught here, never thrown
// across the C boundary.

#include "shim.h"

#include <torch/torch.h>

#include <cstring>
#include <string>
#include <vector>

namespace {

thread_local std::string last_error;

int fail(const std::string &msg) {
  last_error = msg;
  return -1;
}

template <typename F>
int guard(F f) {
  try {
    f();
    return 0;
  } catch (const c10::Error &e) {
    return fail(e.what_without_backtrace());
  } catch (const std::exception &e) {
    return fail(e.what());
  } catch (...) {
    return fail("unknown C++ exception");
  }
}

torch::Device parse_device(const char *device) {
  torch::Device d(std::string(device ? device : "cpu"));
  if (d.is_cuda()) {
    if (!torch::cuda::is_available()) {
      throw std::runtime_error(
          "device " + std::string(device) +
          ": this libtorch has no usable CUDA (torch::cuda::is_available() is false: a CPU-only "
          "build such as Debian's libtorch, no NVIDIA driver, or no GPU)");
    }
    int64_t count = static_cast<int64_t>(torch::cuda::device_count());
    if (d.has_index() && d.index() >= count) {
      throw std::runtime_error("device " + std::string(device) + ": only " + std::to_string(count) +
                               " CUDA devices");
    }
  } else if (!d.is_cpu()) {
    throw std::runtime_error("device " + std::string(device) + ": want cpu, cuda or cuda:N");
  }
  return d;
}

torch::TensorOptions f32(const torch::Device &d) {
  return torch::TensorOptions().dtype(torch::kFloat32).device(d);
}

}  // namespace

// A network's parameters live in one flat tensor (a leaf, with one flat
// gradient); the layers use views of it. Adam, clipping and zeroing then
// take a few operations per network instead of a few per parameter, which
// is most of a small network's step on the CPU.
struct drv_net {
  torch::Device dev{torch::kCPU};
  std::vector<int> kinds;
  torch::Tensor flat;                       // every parameter, in order
  std::vector<int64_t> off;                 // parameter i starts at flat[off[i]]
  std::vector<std::vector<int64_t>> shape;  // and has this shape
  torch::Tensor out;                        // the last forward's output, with its graph

  torch::Tensor param(const torch::Tensor &t, size_t i) const {
    int64_t n = 1;
    for (int64_t d : shape[i]) n *= d;
    return t.narrow(0, off[i], n).view(shape[i]);
  }
};

struct drv_opt {
  std::vector<torch::Tensor> params;  // the networks' flat tensors
  std::unique_ptr<torch::optim::Adam> adam;
};

extern "C" {

const char *drv_last_error(void) { return last_error.c_str(); }

const char *drv_version(void) {
  static std::string v = std::to_string(TORCH_VERSION_MAJOR) + "." + std::to_string(TORCH_VERSION_MINOR) +
                         "." + std::to_string(TORCH_VERSION_PATCH);
  return v.c_str();
}

int drv_cuda_device_count(void) {
  try {
    return torch::cuda::is_available() ? static_cast<int>(torch::cuda::device_count()) : 0;
  } catch (...) {
    return 0;
  }
}

// OpenBLAS (Debian's libtorch multiplies through it) keeps its own thread
// pool, which torch::set_num_threads does not size; a weak reference
// finds it when the process has it.
extern "C" void openblas_set_num_threads(int) __attribute__((weak));

void drv_set_num_threads(int n) {
  if (n <= 0) return;
  torch::set_num_threads(n);
  if (openblas_set_num_threads) openblas_set_num_threads(n);
}

int drv_check_device(const char *device) {
  return guard([&] { parse_device(device); });
}

drv_net *drv_net_new(int nlayers, const int *kinds, const int64_t *dims, const char *device) {
  drv_net *n = nullptr;
  int rc = guard([&] {
    auto net = std::make_unique<drv_net>();
    net->dev = parse_device(device);
    int lin = 0;
    int64_t total = 0;
    for (int i = 0; i < nlayers; i++) {
      int k = kinds[i];
      if (k != DRV_LINEAR && k != DRV_TANH && k != DRV_RELU) {
        throw std::runtime_error("layer " + std::to_string(i) + ": unknown kind " + std::to_string(k));
      }
      net->kinds.push_back(k);
      if (k == DRV_LINEAR) {
        int64_t in = dims[2 * lin], out = dims[2 * lin + 1];
        net->off.push_back(total);
        net->shape.push_back({out, in});
        total += out * in;
        net->off.push_back(total);
        net->shape.push_back({out});
        total += out;
        lin++;
      }
    }
    net->flat = torch::zeros({total}, f32(net->dev)).requires_grad_(true);
    // The gradient exists from the start, so that Adam steps every
    // parameter every time, as Drover's Go Adam does (torch skips a
    // parameter whose gradient was never set).
    net->flat.mutable_grad() = torch::zeros_like(net->flat);
    n = net.release();
  });
  return rc == 0 ? n : nullptr;
}

void drv_net_free(drv_net *n) { delete n; }

int drv_net_nparams(drv_net *n) { return static_cast<int>(n->off.size()); }

static int check_param(drv_net *n, int i, int64_t len) {
  if (i < 0 || i >= static_cast<int>(n->off.size())) {
    return fail("parameter " + std::to_string(i) + " out of range");
  }
  int64_t want = 1;
  for (int64_t d : n->shape[i]) want *= d;
  if (want != len) {
    return fail("parameter " + std::to_string(i) + " has " + std::to_string(want) + " values, not " +
                std::to_string(len));
  }
  return 0;
}

int drv_net_set_param(drv_net *n, int i, const float *src, int64_t len) {
  if (check_param(n, i, len) != 0) return -1;
  return guard([&] {
    torch::NoGradGuard ng;
    auto host = torch::from_blob(const_cast<float *>(src), n->shape[i], torch::kFloat32);
    n->param(n->flat, i).copy_(host);
  });
}

static int copy_out(const torch::Tensor &t, float *dst, int64_t len) {
  return guard([&] {
    auto host = t.detach().to(torch::kCPU).contiguous();
    if (host.numel() != len) {
      throw std::runtime_error("tensor has " + std::to_string(host.numel()) + " values, not " +
                               std::to_string(len));
    }
    std::memcpy(dst, host.data_ptr<float>(), sizeof(float) * len);
  });
}

int drv_net_get_param(drv_net *n, int i, float *dst, int64_t len) {
  if (check_param(n, i, len) != 0) return -1;
  return copy_out(n->param(n->flat, i), dst, len);
}

int drv_net_get_grad(drv_net *n, int i, float *dst, int64_t len) {
  if (check_param(n, i, len) != 0) return -1;
  return copy_out(n->param(n->flat.grad(), i), dst, len);
}

int drv_net_forward(drv_net *n, const float *x, int64_t rows, int64_t cols, float *out, int64_t outlen) {
  return guard([&] {
    // A copy: the graph keeps the input until the backward pass, and the
    // caller's memory is only lent for this call.
    torch::Tensor h = torch::from_blob(const_cast<float *>(x), {rows, cols}, torch::kFloat32)
                          .to(n->dev, /*non_blocking=*/false, /*copy=*/true);
    size_t p = 0;
    for (int k : n->kinds) {
      switch (k) {
        case DRV_LINEAR:
          h = torch::addmm(n->param(n->flat, p + 1), h, n->param(n->flat, p).t());
          p += 2;
          break;
        case DRV_TANH:
          h = torch::tanh(h);
          break;
        case DRV_RELU:
          h = torch::relu(h);
          break;
      }
    }
    n->out = h;
    auto host = h.detach().to(torch::kCPU).contiguous();
    if (host.numel() != outlen) {
      throw std::runtime_error("output has " + std::to_string(host.numel()) + " values, not " +
                               std::to_string(outlen));
    }
    std::memcpy(out, host.data_ptr<float>(), sizeof(float) * outlen);
  });
}

int drv_net_backward(drv_net *n, const float *dy, int64_t len) {
  return guard([&] {
    if (!n->out.defined()) throw std::runtime_error("backward without a forward pass");
    if (n->out.numel() != len) {
      throw std::runtime_error("gradient has " + std::to_string(len) + " values for an output of " +
                               std::to_string(n->out.numel()));
    }
    auto g = torch::from_blob(const_cast<float *>(dy), n->out.sizes(), torch::kFloat32)
                 .to(n->dev, false, true);
    n->out.backward(g);
    n->out = torch::Tensor();  // the graph is spent
  });
}

int drv_net_zero_grad(drv_net *n) {
  return guard([&] {
    n->flat.mutable_grad().zero_();
  });
}

drv_opt *drv_adam_new(drv_net **nets, int nnets, double lr, double eps) {
  drv_opt *o = nullptr;
  int rc = guard([&] {
    auto opt = std::make_unique<drv_opt>();
    for (int i = 0; i < nnets; i++) {
      opt->params.push_back(nets[i]->flat);
    }
    opt->adam = std::make_unique<torch::optim::Adam>(
        opt->params, torch::optim::AdamOptions(lr).betas({0.9, 0.999}).eps(eps).weight_decay(0));
    o = opt.release();
  });
  return rc == 0 ? o : nullptr;
}

void drv_opt_free(drv_opt *o) { delete o; }

int drv_opt_set_lr(drv_opt *o, double lr) {
  return guard([&] {
    for (auto &g : o->adam->param_groups()) {
      static_cast<torch::optim::AdamOptions &>(g.options()).lr(lr);
    }
  });
}

int drv_opt_step(drv_opt *o) {
  return guard([&] { o->adam->step(); });
}

int drv_opt_clip_grad_norm(drv_opt *o, double max_norm, double *total) {
  return guard([&] { *total = torch::nn::utils::clip_grad_norm_(o->params, max_norm); });
}

}  // extern "C"
