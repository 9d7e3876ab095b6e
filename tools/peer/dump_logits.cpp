// llama-dump-logits: llama.cpp's fp32 logits at every position of one prompt, for the peer oracles.
// Built against the peer's libllama by tools/peer/llamacpp.sh; never part of deltaserve.
//
//   llama-dump-logits MODEL.gguf THREADS IDS.i32 OUT.f32 [--no-repack] [--f32-kv] [--no-flash-attn]
//
// IDS.i32: the prompt, int32 little-endian token ids. The whole prompt is one llama_decode call with
// n_batch = n_ubatch = n_tokens (one ubatch) and every position's logits requested. OUT.f32 receives
// [n_tokens, n_vocab] fp32 little-endian. Without flags the context is llama.cpp's default (flash
// attention auto, F16 KV cache, weight repacking), as its users get it; the flags turn repacking off,
// make the KV cache F32 and turn flash attention off (with an F32 model: llama.cpp's fp32 arithmetic).
// llama.cpp's log goes to stderr (which tensors were repacked, what flash attention resolved to, the
// KV cache types); stdout gets one JSON line.
#include "llama.h"

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

static bool g_repacked = false;

static void log_to_stderr(ggml_log_level, const char * text, void *) {
    if (std::strstr(text, "CPU_REPACK") != nullptr) {
        g_repacked = true;  // "CPU_REPACK model buffer size = ..." appears only when weights were repacked
    }
    std::fputs(text, stderr);
}

int main(int argc, char ** argv) {
    bool repack = true, f32_kv = false, flash_attn = true, usage = argc < 5;
    for (int i = 5; i < argc; ++i) {
        if (std::strcmp(argv[i], "--no-repack") == 0) {
            repack = false;
        } else if (std::strcmp(argv[i], "--f32-kv") == 0) {
            f32_kv = true;
        } else if (std::strcmp(argv[i], "--no-flash-attn") == 0) {
            flash_attn = false;
        } else {
            usage = true;
        }
    }
    if (usage) {
        std::fprintf(stderr, "usage: %s MODEL.gguf THREADS IDS.i32 OUT.f32 [--no-repack] [--f32-kv] [--no-flash-attn]\n",
                     argv[0]);
        return 2;
    }
    const char * model_path = argv[1];
    const int threads = std::atoi(argv[2]);

    std::vector<llama_token> ids;
    if (FILE * f = std::fopen(argv[3], "rb")) {
        int32_t id;
        while (std::fread(&id, sizeof id, 1, f) == 1) {
            ids.push_back(id);
        }
        std::fclose(f);
    }
    if (ids.empty() || threads <= 0) {
        std::fprintf(stderr, "error: need a non-empty id file and THREADS > 0\n");
        return 2;
    }
    const int n = static_cast<int>(ids.size());

    llama_log_set(log_to_stderr, nullptr);
    llama_backend_init();

    llama_model_params mp = llama_model_default_params();
    mp.use_extra_bufts = repack;
    llama_model * model = llama_model_load_from_file(model_path, mp);
    if (model == nullptr) {
        std::fprintf(stderr, "error: cannot load %s\n", model_path);
        return 1;
    }
    llama_context_params cp = llama_context_default_params();
    cp.n_ctx = static_cast<uint32_t>(n);
    cp.n_batch = static_cast<uint32_t>(n);
    cp.n_ubatch = static_cast<uint32_t>(n);
    cp.n_seq_max = 1;
    cp.n_threads = threads;
    cp.n_threads_batch = threads;
    if (f32_kv) {
        cp.type_k = GGML_TYPE_F32;
        cp.type_v = GGML_TYPE_F32;
    }
    if (!flash_attn) {
        cp.flash_attn_type = LLAMA_FLASH_ATTN_TYPE_DISABLED;
    }
    llama_context * ctx = llama_init_from_model(model, cp);
    if (ctx == nullptr) {
        std::fprintf(stderr, "error: cannot create a context\n");
        return 1;
    }
    const int n_vocab = llama_vocab_n_tokens(llama_model_get_vocab(model));

    llama_batch batch = llama_batch_init(n, 0, 1);
    for (int i = 0; i < n; ++i) {
        batch.token[i] = ids[i];
        batch.pos[i] = i;
        batch.n_seq_id[i] = 1;
        batch.seq_id[i][0] = 0;
        batch.logits[i] = 1;
    }
    batch.n_tokens = n;
    if (const int rc = llama_decode(ctx, batch); rc != 0) {
        std::fprintf(stderr, "error: llama_decode returned %d\n", rc);
        return 1;
    }

    FILE * out = std::fopen(argv[4], "wb");
    if (out == nullptr) {
        std::fprintf(stderr, "error: cannot write %s\n", argv[4]);
        return 1;
    }
    for (int i = 0; i < n; ++i) {
        const float * row = llama_get_logits_ith(ctx, i);  // [n_vocab]
        if (row == nullptr || std::fwrite(row, sizeof(float), n_vocab, out) != static_cast<size_t>(n_vocab)) {
            std::fprintf(stderr, "error: no logits for position %d\n", i);
            return 1;
        }
    }
    std::fclose(out);

    std::printf("{\"n_tokens\": %d, \"n_vocab\": %d, \"threads\": %d, \"repack_requested\": %s, "
                "\"repacked\": %s, \"f32_kv\": %s, \"flash_attn_allowed\": %s, \"system_info\": \"%s\"}\n",
                n, n_vocab, threads, repack ? "true" : "false", g_repacked ? "true" : "false",
                f32_kv ? "true" : "false", flash_attn ? "true" : "false", llama_print_system_info());
    llama_batch_free(batch);
    llama_free(ctx);
    llama_model_free(model);
    llama_backend_free();
    return 0;
}
