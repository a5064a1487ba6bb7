// llama.cpp's CPU flash attention for the bench (ggml_attention.h): ggml_flash_attn_ext over
// tensors that view the caller's buffers, as llama.cpp's graph builds it for a decode step
// (src/llama-graph.cpp, build_attn_mha: q [head_dim, 1, n_head] in binary32, k and v views of
// the cache [head_dim, n_kv, n_head_kv], a KQ mask [n_kv, 1] in f16 of zeros where every key is
// visible, scale 1/sqrt(head_dim), no ALiBi, no softcap), computed on a ggml thread pool kept for
// the object's life. Only ggml's public headers are used.
#include "ggml_attention.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include "ggml-cpu.h"
#include "ggml.h"

struct posenc_ggml_attention {
  ggml_context* ctx = nullptr;
  ggml_cgraph* graph = nullptr;
  ggml_threadpool* pool = nullptr;
  ggml_cplan plan{};
  std::vector<uint8_t> work;
  std::vector<ggml_fp16_t> mask;
};

extern "C" {

__attribute__((visibility("default"))) posenc_ggml_attention* posenc_ggml_attention_new(
    int kv_type, int64_t n_kv, int64_t n_head, int64_t n_head_kv, int64_t head_dim, int threads, const void* k,
    const void* v, const float* q, float* out, char* error) {
  const ggml_type type = kv_type == 0 ? GGML_TYPE_F16 : GGML_TYPE_BF16;
  auto* a = new posenc_ggml_attention;
  const ggml_init_params params{ggml_tensor_overhead() * 16 + ggml_graph_overhead(), nullptr, true};
  a->ctx = ggml_init(params);
  if (!a->ctx) {
    std::snprintf(error, 256, "ggml_init failed");
    delete a;
    return nullptr;
  }
  const size_t element = ggml_type_size(type);
  ggml_tensor* tq = ggml_new_tensor_3d(a->ctx, GGML_TYPE_F32, head_dim, 1, n_head);
  tq->data = const_cast<float*>(q);
  // The cache: one tensor of [n_head_kv * head_dim, n_kv] rows, viewed per head as llama.cpp does.
  ggml_tensor* cache_k = ggml_new_tensor_2d(a->ctx, type, n_head_kv * head_dim, n_kv);
  ggml_tensor* cache_v = ggml_new_tensor_2d(a->ctx, type, n_head_kv * head_dim, n_kv);
  cache_k->data = const_cast<void*>(k);
  cache_v->data = const_cast<void*>(v);
  ggml_tensor* tk = ggml_view_3d(a->ctx, cache_k, head_dim, n_kv, n_head_kv, cache_k->nb[1], head_dim * element, 0);
  ggml_tensor* tv = ggml_view_3d(a->ctx, cache_v, head_dim, n_kv, n_head_kv, cache_v->nb[1], head_dim * element, 0);
  a->mask.assign(static_cast<size_t>(n_kv), ggml_fp32_to_fp16(0.0f));
  ggml_tensor* mask = ggml_new_tensor_2d(a->ctx, GGML_TYPE_F16, n_kv, 1);
  mask->data = a->mask.data();
  ggml_tensor* result = ggml_flash_attn_ext(a->ctx, tq, tk, tv, mask, 1.0f / std::sqrt(static_cast<float>(head_dim)), 0.0f, 0.0f);
  result->data = out;
  a->graph = ggml_new_graph(a->ctx);
  ggml_build_forward_expand(a->graph, result);
  ggml_threadpool_params pool = ggml_threadpool_params_default(threads);
  a->pool = ggml_threadpool_new(&pool);
  a->plan = ggml_graph_plan(a->graph, threads, a->pool);
  a->work.resize(a->plan.work_size);
  a->plan.work_data = a->work.data();
  return a;
}

__attribute__((visibility("default"))) int posenc_ggml_attention_run(posenc_ggml_attention* a) {
  return ggml_graph_compute(a->graph, &a->plan) == GGML_STATUS_SUCCESS ? 0 : 1;
}

__attribute__((visibility("default"))) void posenc_ggml_attention_free(posenc_ggml_attention* a) {
  if (a->pool) ggml_threadpool_free(a->pool);
  ggml_free(a->ctx);
  delete a;
}
}
