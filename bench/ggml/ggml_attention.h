#ifndef POSENC_GGML_ATTENTION_H
#define POSENC_GGML_ATTENTION_H
/* The bench's view of llama.cpp's CPU flash attention (ggml_flash_attn_ext), a module the bench
   loads with dlopen (bench/ggml/CMakeLists.txt says why): one decode step of one query token over
   a KV cache laid out as llama.cpp's ([slot][kv head][head_dim]), q and the output in binary32. */
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct posenc_ggml_attention posenc_ggml_attention;

/* kv_type: 0 f16, 1 bf16. k and v: n_kv slots of n_head_kv rows of head_dim elements each; q:
   n_head rows; out: n_head rows. The graph, a thread pool of `threads` threads and the work buffer
   are made here, once. Null when ggml refuses (message in `error`, 256 bytes). */
typedef posenc_ggml_attention* (*posenc_ggml_attention_new_fn)(int kv_type, int64_t n_kv, int64_t n_head,
                                                               int64_t n_head_kv, int64_t head_dim, int threads,
                                                               const void* k, const void* v, const float* q,
                                                               float* out, char* error);
/* One ggml_graph_compute of the step; 0 on success. */
typedef int (*posenc_ggml_attention_run_fn)(posenc_ggml_attention*);
typedef void (*posenc_ggml_attention_free_fn)(posenc_ggml_attention*);

#ifdef __cplusplus
}
#endif
#endif
