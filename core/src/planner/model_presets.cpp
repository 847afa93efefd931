// Model presets (published shapes with their sources) and the params_b-only shape rule.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "../json_fields.hpp"
#include "linkwise/enum_names.hpp"
#include "linkwise/error.hpp"
#include "linkwise/planner/model.hpp"
#include "linkwise/planner/workload.hpp"

namespace linkwise::planner {

namespace {

constexpr EnumNames<AttentionKind, 3> kAttentionNames{{
    {AttentionKind::mha, "mha"},
    {AttentionKind::gqa, "gqa"},
    {AttentionKind::mla, "mla"},
}};

}  // namespace

std::string_view to_string(AttentionKind kind) noexcept { return enum_name(kAttentionNames, kind); }

double ModelShape::attention_params() const {
  const double h = hidden, n = heads;
  if (attention == AttentionKind::mla) {
    // DeepSeek-V2/V3 modeling code: q_a (h x q_lora) + its norm + q_b (q_lora x heads (nope + rope)),
    // or q (h x heads (nope + rope)) without a q latent; kv_a (h x (kv_lora + rope)) + its norm;
    // kv_b (kv_lora x heads (nope + v)); o (heads v x h).
    const double q = q_lora_rank > 0 ? h * q_lora_rank + q_lora_rank + double(q_lora_rank) * n * qk_head_dim()
                                     : h * n * qk_head_dim();
    const double kv =
        h * (kv_lora_rank + rope_head_dim) + kv_lora_rank + double(kv_lora_rank) * n * (head_dim() + v_head_dim());
    return q + kv + n * v_head_dim() * h;
  }
  const double q_width = n * head_dim();
  const double kv_width = double(kv_heads) * head_dim();
  return h * q_width /*Q*/ + 2.0 * h * kv_width /*K,V*/ + q_width * h /*O*/;
}

double ModelShape::layer_params() const {
  const double mlp = (gated_mlp ? 3.0 : 2.0) * double(hidden) * ffn_hidden;
  const double norms = 2.0 * hidden;
  return attention_params() + mlp + norms;
}

double ModelShape::expert_params() const { return (gated_mlp ? 3.0 : 2.0) * double(hidden) * moe.expert_ffn_hidden; }

double ModelShape::moe_layer_base_params() const {
  const double router = double(hidden) * moe.experts;
  return attention_params() + moe.shared_experts * expert_params() + router + 2.0 * hidden;
}

double ModelShape::total_params() const {
  const double layer_weights =
      dense_mlp_layers() * layer_params() + moe_layers() * (moe_layer_base_params() + moe.experts * expert_params());
  return layer_weights + (tied_embeddings ? 1.0 : 2.0) * embedding_params() + hidden;
}

double ModelShape::active_params() const {
  const double layer_weights =
      dense_mlp_layers() * layer_params() + moe_layers() * (moe_layer_base_params() + moe.top_k * expert_params());
  return layer_weights + (tied_embeddings ? 1.0 : 2.0) * embedding_params() + hidden;
}

double ModelShape::kv_elements_per_token_layer() const {
  if (attention == AttentionKind::mla) return double(kv_lora_rank) + rope_head_dim;
  return 2.0 * kv_heads * head_dim();
}

namespace {

ModelShape make(std::string name, int layers, int hidden, int heads, int kv_heads, int ffn, int vocab, bool gated,
                bool tied, bool dropout, std::string source) {
  ModelShape m;
  m.name = std::move(name);
  m.layers = layers;
  m.hidden = hidden;
  m.heads = heads;
  m.kv_heads = kv_heads;
  m.ffn_hidden = ffn;
  m.vocab = vocab;
  m.gated_mlp = gated;
  m.tied_embeddings = tied;
  m.dropout = dropout;
  m.source = std::move(source);
  return m;
}

ModelShape head_dim(ModelShape m, int head_dim) {
  m.head_dim_explicit = head_dim;
  return m;
}

ModelShape moe(ModelShape m, int experts, int top_k, int shared, int expert_ffn, int dense_layers, int every,
               std::string router = "softmax") {
  m.moe.experts = experts;
  m.moe.top_k = top_k;
  m.moe.shared_experts = shared;
  m.moe.expert_ffn_hidden = expert_ffn;
  m.moe.dense_layers = dense_layers;
  m.moe.moe_every = every;
  m.moe.router = std::move(router);
  return m;
}

}  // namespace

const std::vector<ModelShape>& presets() {
  static const std::vector<ModelShape> all = [] {
    std::vector<ModelShape> v = {
        make("gpt3-175b", 96, 12288, 96, 96, 49152, 50257, false, true, true,
             "Brown et al. 2020, 'Language Models are Few-Shot Learners' (arXiv 2005.14165) Table 2.1; "
             "GPT-2 BPE vocabulary of 50257"),
        make("llama2-7b", 32, 4096, 32, 32, 11008, 32000, true, false, false,
             "huggingface.co/meta-llama/Llama-2-7b-hf config.json; Touvron et al. 2023 (arXiv 2307.09288)"),
        make("llama2-13b", 40, 5120, 40, 40, 13824, 32000, true, false, false,
             "huggingface.co/meta-llama/Llama-2-13b-hf config.json"),
        make("llama2-70b", 80, 8192, 64, 8, 28672, 32000, true, false, false,
             "huggingface.co/meta-llama/Llama-2-70b-hf config.json"),
        make("llama3.1-8b", 32, 4096, 32, 8, 14336, 128256, true, false, false,
             "huggingface.co/meta-llama/Llama-3.1-8B config.json; Llama 3 Herd paper (arXiv 2407.21783) Table 3"),
        make("llama3.1-70b", 80, 8192, 64, 8, 28672, 128256, true, false, false,
             "huggingface.co/meta-llama/Llama-3.1-70B config.json; arXiv 2407.21783 Table 3"),
        make("llama3.1-405b", 126, 16384, 128, 8, 53248, 128256, true, false, false,
             "huggingface.co/meta-llama/Llama-3.1-405B config.json; arXiv 2407.21783 Table 3"),
        make("llama3.3-70b", 80, 8192, 64, 8, 28672, 128256, true, false, false,
             "huggingface.co/meta-llama/Llama-3.3-70B-Instruct config.json"),
        make("mistral-7b", 32, 4096, 32, 8, 14336, 32000, true, false, false,
             "huggingface.co/mistralai/Mistral-7B-v0.1 config.json; Jiang et al. 2023 (arXiv 2310.06825) Table 1; "
             "v0.1's 4096-token sliding window is not set (v0.2 and later dropped it; give attention.window for "
             "v0.1 beyond 4096 tokens)"),
        make("mistral-large-2", 88, 12288, 96, 8, 28672, 32768, true, false, false,
             "huggingface.co/mistralai/Mistral-Large-Instruct-2407 config.json (head_dim 128 = 12288 / 96)"),
        make("qwen2.5-7b", 28, 3584, 28, 4, 18944, 152064, true, false, false,
             "huggingface.co/Qwen/Qwen2.5-7B config.json; Qwen2.5 technical report (arXiv 2412.15115) Table 1"),
        make("qwen2.5-32b", 64, 5120, 40, 8, 27648, 152064, true, false, false,
             "huggingface.co/Qwen/Qwen2.5-32B config.json; arXiv 2412.15115 Table 1"),
        make("qwen2.5-72b", 80, 8192, 64, 8, 29568, 152064, true, false, false,
             "huggingface.co/Qwen/Qwen2.5-72B config.json; Qwen2.5 technical report (arXiv 2412.15115) Table 1"),
        head_dim(make("qwen3-32b", 64, 5120, 64, 8, 25600, 151936, true, false, false,
                      "huggingface.co/Qwen/Qwen3-32B config.json (head_dim 128); Qwen3 technical report (arXiv "
                      "2505.09388) Table 1"),
                 128),
        head_dim(make("gemma3-27b", 62, 5376, 32, 16, 21504, 262208, true, true, false,
                      "huggingface.co/google/gemma-3-27b-pt config.json text_config (head_dim 128, GeGLU, tied "
                      "embeddings; sliding_window 1024 with every 6th layer global, sliding_window_pattern 6: "
                      "attention.window / full_every); text model only"),
                 128),
        // Mixture-of-experts.
        moe(make("mixtral-8x7b", 32, 4096, 32, 8, 14336, 32000, true, false, false,
                 "huggingface.co/mistralai/Mixtral-8x7B-v0.1 config.json (8 local experts, 2 per token); "
                 "Jiang et al. 2024 (arXiv 2401.04088): 47B total, 13B active"),
            8, 2, 0, 14336, 0, 1),
        moe(make("mixtral-8x22b", 56, 6144, 48, 8, 16384, 32000, true, false, false,
                 "huggingface.co/mistralai/Mixtral-8x22B-v0.1 config.json (8 experts, 2 per token); "
                 "mistral.ai/news/mixtral-8x22b: 141B total, 39B active"),
            8, 2, 0, 16384, 0, 1),
        moe(make("qwen3-30b-a3b", 48, 2048, 32, 4, 6144, 151936, true, false, false,
                 "huggingface.co/Qwen/Qwen3-30B-A3B config.json (head_dim 128, 128 experts, 8 per token, "
                 "moe_intermediate_size 768); arXiv 2505.09388 Table 2: 30.5B total, 3.3B active"),
            128, 8, 0, 768, 0, 1),
        moe(make("qwen3-235b-a22b", 94, 4096, 64, 4, 12288, 151936, true, false, false,
                 "huggingface.co/Qwen/Qwen3-235B-A22B config.json (head_dim 128, 128 experts, 8 per token, "
                 "moe_intermediate_size 1536); arXiv 2505.09388 Table 2: 235B total, 22B active"),
            128, 8, 0, 1536, 0, 1),
        moe(make("llama4-scout", 48, 5120, 40, 8, 16384, 202048, true, false, false,
                 "huggingface.co/meta-llama/Llama-4-Scout-17B-16E config.json text_config (16 experts, 1 per "
                 "token + 1 shared, intermediate_size 8192, every layer MoE); 109B total, 17B active; text model only"),
            16, 1, 1, 8192, 0, 1),
        moe(make("llama4-maverick", 48, 5120, 40, 8, 16384, 202048, true, false, false,
                 "huggingface.co/meta-llama/Llama-4-Maverick-17B-128E config.json text_config (128 experts, 1 per "
                 "token + 1 shared, intermediate_size 8192, interleave_moe_layer_step 2, dense layers "
                 "intermediate_size_mlp 16384); 400B total, 17B active; text model only"),
            128, 1, 1, 8192, 0, 2),
        moe(make("gpt-oss-20b", 24, 2880, 64, 8, 2880, 201088, true, false, false,
                 "huggingface.co/openai/gpt-oss-20b config.json (head_dim 64, 32 experts, 4 per token, "
                 "intermediate_size 2880); OpenAI gpt-oss model card (arXiv 2508.10925) Table 1: 21B total, "
                 "3.6B active; sliding_window 128 on the layer_types' sliding_attention layers (every other one, "
                 "attention.window / full_every); attention sinks not modelled"),
            32, 4, 0, 2880, 0, 1),
        moe(make("gpt-oss-120b", 36, 2880, 64, 8, 2880, 201088, true, false, false,
                 "huggingface.co/openai/gpt-oss-120b config.json (head_dim 64, 128 experts, 4 per token, "
                 "intermediate_size 2880); OpenAI gpt-oss model card (arXiv 2508.10925) Table 1: 117B total, "
                 "5.1B active; sliding_window 128 on the layer_types' sliding_attention layers (every other one, "
                 "attention.window / full_every); attention sinks not modelled"),
            128, 4, 0, 2880, 0, 1),
    };
    for (ModelShape& m : v)
      if (m.name.rfind("qwen3-", 0) == 0 || m.name.rfind("llama4-", 0) == 0) m.head_dim_explicit = 128;
    // Gemma 3: five local layers (1024-token window) to one global layer (its technical report, §2;
    // config.json sliding_window 1024, sliding_window_pattern 6).
    // Llama 4: chunked local attention (attention_chunk_size 8192) on its RoPE layers, full attention
    // on every 4th (NoPE) layer (transformers Llama4TextConfig: attention_chunk_size 8192,
    // no_rope_layer_interval 4; layer_types chunked_attention / full_attention). Planned as a window
    // of 8192: a chunk's KV cache holds at most that many tokens, and a token attends to at most
    // that many (on average half as many within its chunk: the window bounds attention from above).
    for (ModelShape& m : v)
      if (m.name.rfind("llama4-", 0) == 0) {
        m.attention_window = 8192;
        m.full_attention_every = 4;
      }
    for (ModelShape& m : v)
      if (m.name == "gemma3-27b") {
        m.attention_window = 1024;
        m.full_attention_every = 6;
      }
    // gpt-oss: config.json layer_types alternate sliding_attention (sliding_window 128) and
    // full_attention, so every 2nd layer keeps full attention.
    for (ModelShape& m : v)
      if (m.name.rfind("gpt-oss-", 0) == 0) {
        // Released with the MoE weights in MXFP4 (model card, arXiv 2508.10925 section 2: "we
        // quantize the MoE weights to MXFP4 format, where weights are quantized to 4.25 bits per
        // parameter"; the rest in BF16).
        m.moe.expert_weights = "mxfp4";
        m.head_dim_explicit = 64;
        m.attention_window = 128;
        m.full_attention_every = 2;
      }
    // DeepSeek-V3 (= R1's shape): MLA, 256 routed experts (8 per token, sigmoid router) + 1 shared,
    // first 3 layers dense. The multi-token-prediction module (14B more on the hub) is left out.
    ModelShape ds = moe(make("deepseek-v3", 61, 7168, 128, 128, 18432, 129280, true, false, false,
                             "huggingface.co/deepseek-ai/DeepSeek-V3 config.json (q_lora_rank 1536, kv_lora_rank 512, "
                             "qk_nope_head_dim 128, qk_rope_head_dim 64, v_head_dim 128, n_routed_experts 256, "
                             "num_experts_per_tok 8, n_shared_experts 1, moe_intermediate_size 2048, "
                             "first_k_dense_replace 3); DeepSeek-V3 technical report (arXiv 2412.19437): 671B total, "
                             "37B active, MTP module not counted"),
                        256, 8, 1, 2048, 3, 1, "sigmoid");
    ds.attention = AttentionKind::mla;
    ds.kv_lora_rank = 512;
    ds.q_lora_rank = 1536;
    ds.rope_head_dim = 64;
    ds.head_dim_explicit = 128;
    ds.v_head_dim_explicit = 128;
    v.push_back(std::move(ds));
    // Context windows as the publishers state them (model cards, papers; the config.json
    // max_position_embeddings where the card says no more), sourced 2026-12-01:
    // - GPT-3: n_ctx 2048 (Brown et al. 2020, arXiv 2005.14165, section 2.1).
    // - Llama 2: 4096 (model cards, config.json max_position_embeddings 4096).
    // - Llama 3.1 / 3.3: 128k = 131072 (model cards; config.json 131072).
    // - Mistral 7B v0.1: 8192 (Jiang et al. 2023, arXiv 2310.06825 Table 1, context_len; config 32768
    //   with a 4096-token sliding window). Mistral Large 2 (2407): 128k (card; config 131072).
    // - Qwen2.5 base 7B/32B/72B: 131072 (config.json). Qwen3: 32768 natively, 131072 with YaRN
    //   (model cards; config 40960 leaves room for output).
    // - Gemma 3 27B: 128K (card; transformers' Gemma3TextConfig default 131072).
    // - Mixtral 8x7B: 32k (Jiang et al. 2024, arXiv 2401.04088; config 32768); 8x22B: 64K (Mistral's
    //   launch post; config 65536).
    // - Llama 4 Scout: 10M, Maverick: 1M (model cards; the Instruct configs 10485760 / 1048576).
    // - gpt-oss: 131072 (config, YaRN applied; model card 128k). DeepSeek-V3: 128K (card; config
    //   163840 with YaRN factor 40).
    struct Window {
      const char* name;
      int tokens, extended;
    };
    constexpr Window kWindows[] = {
        {"gpt3-175b", 2048, 0},
        {"llama2-7b", 4096, 0},
        {"llama2-13b", 4096, 0},
        {"llama2-70b", 4096, 0},
        {"llama3.1-8b", 131072, 0},
        {"llama3.1-70b", 131072, 0},
        {"llama3.1-405b", 131072, 0},
        {"llama3.3-70b", 131072, 0},
        {"mistral-7b", 8192, 0},
        {"mistral-large-2", 131072, 0},
        {"qwen2.5-7b", 131072, 0},
        {"qwen2.5-32b", 131072, 0},
        {"qwen2.5-72b", 131072, 0},
        {"qwen3-32b", 32768, 131072},
        {"gemma3-27b", 131072, 0},
        {"mixtral-8x7b", 32768, 0},
        {"mixtral-8x22b", 65536, 0},
        {"qwen3-30b-a3b", 32768, 131072},
        {"qwen3-235b-a22b", 32768, 131072},
        {"llama4-scout", 10485760, 0},
        {"llama4-maverick", 1048576, 0},
        {"gpt-oss-20b", 131072, 0},
        {"gpt-oss-120b", 131072, 0},
        {"deepseek-v3", 131072, 0},
    };
    for (ModelShape& m : v)
      for (const Window& w : kWindows)
        if (m.name == w.name) {
          m.context_tokens = w.tokens;
          m.context_tokens_extended = w.extended;
        }
    return v;
  }();
  return all;
}

namespace {

// A positive whole number of the model's shape, at most `maximum` (an error names the field).
int shape_int(const nlohmann::json& model, const char* key, long long maximum) {
  const std::string field = std::string("model.") + key;
  return static_cast<int>(json_fields::integer_in(model.at(key), field, 1, maximum));
}

// model.context_tokens: the context the model supports, where the workload states it (0: unknown).
int context_tokens(const nlohmann::json& model) {
  const nlohmann::json* v = json_fields::member_or_null(model, "context_tokens");
  return v ? static_cast<int>(json_fields::integer_in(*v, "model.context_tokens", 1, 1LL << 30)) : 0;
}

bool shape_bool(const nlohmann::json& model, const char* key) {
  const nlohmann::json* v = json_fields::member_or_null(model, key);
  return v && json_fields::boolean(*v, std::string("model.") + key);
}

bool same_name(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::tolower((unsigned char)a[i]) != std::tolower((unsigned char)b[i])) return false;
  return true;
}

}  // namespace

std::vector<std::string> preset_names() {
  std::vector<std::string> names;
  for (const auto& p : presets()) names.push_back(p.name);
  return names;
}

const ModelShape& preset(std::string_view name) {
  for (const auto& p : presets())
    if (same_name(p.name, name)) return p;
  std::string known;
  for (const auto& p : presets()) known += (known.empty() ? "" : ", ") + p.name;
  throw_not_found("model.preset", "unknown model preset '" + std::string(name) + "'; known: " + known);
}

ModelShape shape_from_params(double params_b, int vocab) {
  if (!(params_b > 0) || params_b > 1e5)
    throw_invalid("model.params_b", "model.params_b must be a positive number of billions, at most 1e5");
  const double n = params_b * 1e9;
  constexpr int kHeadDim = 128;
  // Per layer with GQA (8 KV heads of 128) and ffn = 8/3 h: about 10 h^2; with h = 128 L,
  // N ~ 10 h^3 / 128.
  // Widths of 1024 and more are multiples of 8 heads, so that 8 KV heads divide the heads.
  const double width = std::cbrt(128.0 * n / 10.0);
  const int step = width >= 1024 ? 8 * kHeadDim : kHeadDim;
  const int hidden = std::max(kHeadDim, int(std::lround(width / step)) * step);
  ModelShape m;
  m.hidden = hidden;
  m.heads = hidden / kHeadDim;
  m.kv_heads = std::min(8, m.heads);
  while (m.heads % m.kv_heads != 0) --m.kv_heads;
  m.ffn_hidden = int(std::ceil(8.0 / 3.0 * hidden / 256.0)) * 256;
  m.vocab = vocab;
  m.gated_mlp = true;
  m.layers = 1;
  const double embeddings = 2.0 * m.embedding_params();
  m.layers = std::max(1, int(std::lround((n - embeddings) / m.layer_params())));
  // Below one layer of width 128 and the vocabulary's embeddings the rule has no shape that small:
  // planning a model several times the size asked for would answer another question.
  if (m.total_params() > 2.0 * n) {
    char smallest[64];
    std::snprintf(smallest, sizeof smallest, "%.3g", m.total_params() / 1e9);
    throw_invalid("model.params_b", "model.params_b (" + nlohmann::json(params_b).dump() +
                                        ") is below the smallest model the params_b rule builds (" + smallest +
                                        " B: one layer of width 128 and the " + std::to_string(vocab) +
                                        "-token vocabulary's embeddings); give the model's shapes instead");
  }
  m.name = "params_b=" + nlohmann::json(params_b).dump();
  m.source = "linkwise shape rule for params_b (Llama-style: SwiGLU, GQA 8 KV heads, head 128, hidden = 128 x layers)";
  return m;
}

// The shape ranges: beyond any published model, and small enough that the search's divisor loops
// (over heads and layers) and every product of shapes stay cheap and inside 64 bits.
namespace shape_limits {
constexpr long long kLayers = limits::kLayers, kHidden = limits::kHidden, kHeads = limits::kHeads, kFfn = limits::kFfn,
                    kVocab = limits::kVocab;
}

namespace {

void reject_unknown_in(const nlohmann::json& obj, const std::string& prefix, std::initializer_list<const char*> known) {
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    bool ok = false;
    for (const char* k : known) ok = ok || it.key() == k;
    if (ok) continue;
    std::string list;
    for (const char* k : known) list += (list.empty() ? "" : ", ") + std::string(k);
    throw_invalid(prefix + "." + it.key(), "unknown field '" + prefix + "." + it.key() + "'; expected one of: " + list);
  }
}

std::optional<long long> int_field(const nlohmann::json& obj, const char* key, const std::string& prefix,
                                   long long minimum, long long maximum) {
  const nlohmann::json* v = json_fields::member_or_null(obj, key);
  if (!v) return std::nullopt;
  return json_fields::integer_in(*v, prefix + "." + key, minimum, maximum);
}

// model.attention: {"kind": "mha" | "gqa" | "mla", "kv_heads", "head_dim", MLA's ranks}.
void parse_attention(const nlohmann::json& a, ModelShape& m) {
  if (!a.is_object()) json_fields::fail("model.attention", "an object", a);
  reject_unknown_in(a, "model.attention",
                    {"kind", "kv_heads", "head_dim", "kv_lora_rank", "q_lora_rank", "rope_head_dim", "v_head_dim",
                     "window", "full_every"});
  const std::string kind =
      json_fields::member_or_null(a, "kind") ? json_fields::string(a["kind"], "model.attention.kind") : "gqa";
  m.attention = parse_enum(kAttentionNames, kind, "model.attention.kind");
  if (const auto v = int_field(a, "head_dim", "model.attention", 1, limits::kHeadDim)) m.head_dim_explicit = int(*v);
  if (const auto v = int_field(a, "kv_heads", "model.attention", 1, limits::kHeads)) {
    if (m.attention != AttentionKind::gqa)
      throw_invalid("model.attention.kv_heads", "model.attention.kv_heads is for kind gqa (mha has kv_heads = heads; "
                                                "mla caches a latent instead)");
    m.kv_heads = int(*v);
  }
  const bool mla = m.attention == AttentionKind::mla;
  for (const char* key : {"kv_lora_rank", "q_lora_rank", "rope_head_dim", "v_head_dim"})
    if (!mla && json_fields::member_or_null(a, key))
      throw_invalid(std::string("model.attention.") + key,
                    std::string("model.attention.") + key + " is for kind mla (multi-head latent attention)");
  if (mla) {
    const auto kv_lora = int_field(a, "kv_lora_rank", "model.attention", 1, limits::kLatentRank);
    if (!kv_lora)
      throw_invalid("model.attention.kv_lora_rank", "model.attention.kv_lora_rank is required for kind mla");
    m.kv_lora_rank = int(*kv_lora);
    m.q_lora_rank = int(int_field(a, "q_lora_rank", "model.attention", 1, limits::kLatentRank).value_or(0));
    m.rope_head_dim = int(int_field(a, "rope_head_dim", "model.attention", 1, limits::kHeadDim).value_or(0));
    m.v_head_dim_explicit = int(int_field(a, "v_head_dim", "model.attention", 1, limits::kHeadDim).value_or(0));
  }
  // Sliding window: tokens a windowed layer attends to; every full_every-th layer attends to all.
  if (const auto w = int_field(a, "window", "model.attention", 1, limits::kAttentionWindow))
    m.attention_window = int(*w);
  if (const auto every = int_field(a, "full_every", "model.attention", 1, limits::kLayers)) {
    if (m.attention_window == 0)
      throw_invalid("model.attention.full_every",
                    "model.attention.full_every (every n-th layer keeps full attention) needs model.attention.window");
    // 1 would leave no layer windowed, more than the layers every layer: neither is a pattern.
    if (*every < 2 || *every > m.layers)
      throw_invalid("model.attention.full_every", "model.attention.full_every must be from 2 to model.layers (" +
                                                      std::to_string(m.layers) + "); got " + std::to_string(*every));
    m.full_attention_every = int(*every);
  }
}

// model.moe: experts, top_k, shared_experts, expert_ffn_hidden, dense_layers, moe_every, router, capacity_factor,
// expert_weights.
void parse_moe(const nlohmann::json& o, ModelShape& m) {
  if (!o.is_object()) json_fields::fail("model.moe", "an object", o);
  reject_unknown_in(o, "model.moe",
                    {"experts", "top_k", "shared_experts", "expert_ffn_hidden", "dense_layers", "moe_every", "router",
                     "capacity_factor", "expert_weights"});
  MoeShape& e = m.moe;
  for (const char* key : {"experts", "top_k", "expert_ffn_hidden"})
    if (!json_fields::member_or_null(o, key))
      throw_invalid(std::string("model.moe.") + key, std::string("model.moe.") + key + " is required");
  e.experts = int(*int_field(o, "experts", "model.moe", 1, limits::kExperts));
  e.top_k = int(*int_field(o, "top_k", "model.moe", 1, limits::kExperts));
  if (e.top_k > e.experts)
    throw_invalid("model.moe.top_k", "model.moe.top_k (" + std::to_string(e.top_k) + ") exceeds model.moe.experts (" +
                                         std::to_string(e.experts) + ")");
  e.expert_ffn_hidden = int(*int_field(o, "expert_ffn_hidden", "model.moe", 1, limits::kFfn));
  e.shared_experts = int(int_field(o, "shared_experts", "model.moe", 0, limits::kExperts).value_or(0));
  e.dense_layers = int(int_field(o, "dense_layers", "model.moe", 0, limits::kLayers).value_or(0));
  e.moe_every = int(int_field(o, "moe_every", "model.moe", 1, limits::kLayers).value_or(1));
  if (e.dense_layers >= m.layers)
    throw_invalid("model.moe.dense_layers", "model.moe.dense_layers (" + std::to_string(e.dense_layers) +
                                                ") leaves no MoE layer among the model's " + std::to_string(m.layers));
  if (m.moe_layers() < 1)
    throw_invalid("model.moe.moe_every",
                  "model.moe.moe_every (" + std::to_string(e.moe_every) + ") leaves no MoE layer after the dense ones");
  if (const auto* r = json_fields::member_or_null(o, "router")) {
    e.router = json_fields::string(*r, "model.moe.router");
    if (e.router != "softmax" && e.router != "sigmoid")
      throw_invalid("model.moe.router", "model.moe.router must be softmax or sigmoid; got '" + e.router + "'");
  }
  if (const auto* c = json_fields::member_or_null(o, "capacity_factor")) {
    e.capacity_factor = json_fields::number_in(*c, "model.moe.capacity_factor", 1, limits::kCapacityFactor, true);
  }
  if (const auto* w = json_fields::member_or_null(o, "expert_weights")) {
    e.expert_weights = json_fields::string(*w, "model.moe.expert_weights");
    if (e.expert_weights != "mxfp4")
      throw_invalid("model.moe.expert_weights",
                    "model.moe.expert_weights must be mxfp4 (or null: the job's precision); got '" + e.expert_weights +
                        "'");
  }
}

}  // namespace

ModelShape parse_model(const nlohmann::json& model) {
  if (!model.is_object())
    throw_invalid("model", "model must be an object: {\"preset\": ...}, {\"params_b\": ...} or explicit shapes");
  static constexpr const char* kShapeFields[] = {"layers",     "hidden",    "heads",     "kv_heads",
                                                 "ffn_hidden", "vocab",     "gated_mlp", "tied_embeddings",
                                                 "dropout",    "attention", "moe",       "context_tokens"};
  for (auto it = model.begin(); it != model.end(); ++it) {
    const std::string& key = it.key();
    const bool known = key == "preset" || key == "params_b" || key == "name" ||
                       std::find(std::begin(kShapeFields), std::end(kShapeFields), key) != std::end(kShapeFields);
    if (!known)
      throw_invalid("model." + key,
                    "unknown field 'model." + key +
                        "'; expected preset, params_b, name or the shapes layers, hidden, heads, kv_heads, "
                        "ffn_hidden, vocab, gated_mlp, tied_embeddings, dropout, attention, moe, context_tokens");
  }
  if (const auto* p = json_fields::member_or_null(model, "preset")) {
    for (const auto& [key, value] : model.items())
      if (key != "preset")
        throw_invalid("model." + key, "model.preset names a published shape; model." + key +
                                          " cannot be given with it (give either a preset or the shape)");
    // Inside a request document an unknown preset is an unknown reference (422), not a missing URL.
    try {
      return preset(json_fields::string(*p, "model.preset"));
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::not_found) throw;
      throw_unknown_reference(e.field(), e.message());
    }
  }
  if (const auto* p = json_fields::member_or_null(model, "params_b")) {
    for (const auto& [key, value] : model.items())
      if (key != "params_b" && key != "vocab" && key != "name" && key != "context_tokens")
        throw_invalid("model." + key, "model.params_b derives the whole shape of a dense model; model." + key +
                                          " cannot be given with it (give params_b, or every shape field; a "
                                          "mixture-of-experts model needs its shape: model.moe, or a preset)");
    const double params_b = json_fields::number_in(*p, "model.params_b", 0, 1e5, false);
    const int vocab = model.contains("vocab") ? shape_int(model, "vocab", shape_limits::kVocab) : 32000;
    ModelShape m = shape_from_params(params_b, vocab);
    if (const auto* name = json_fields::member_or_null(model, "name"))
      m.name = json_fields::string(*name, "model.name");
    m.context_tokens = context_tokens(model);
    return m;
  }
  ModelShape m;
  for (const char* key : {"layers", "hidden", "heads"})
    if (!json_fields::member_or_null(model, key))
      throw_invalid(std::string("model.") + key,
                    std::string("model.") + key + " is required (or give model.preset or model.params_b)");
  m.layers = shape_int(model, "layers", shape_limits::kLayers);
  m.hidden = shape_int(model, "hidden", shape_limits::kHidden);
  m.heads = shape_int(model, "heads", shape_limits::kHeads);
  m.kv_heads =
      json_fields::member_or_null(model, "kv_heads") ? shape_int(model, "kv_heads", shape_limits::kHeads) : m.heads;
  if (const auto* a = json_fields::member_or_null(model, "attention")) {
    if (a->is_object() && a->contains("kv_heads") && json_fields::member_or_null(model, "kv_heads"))
      throw_invalid("model.attention.kv_heads", "give kv_heads once: model.kv_heads or model.attention.kv_heads");
    parse_attention(*a, m);
    if (m.attention != AttentionKind::gqa) {
      if (json_fields::member_or_null(model, "kv_heads") && m.attention == AttentionKind::mla)
        throw_invalid("model.kv_heads",
                      "model.kv_heads is for gqa; mla caches a latent (model.attention.kv_lora_rank)");
      // mha: one K and V per query head; fewer KV heads is gqa, more is no attention at all.
      if (m.attention == AttentionKind::mha && m.kv_heads != m.heads)
        throw_invalid("model.kv_heads", "model.kv_heads (" + std::to_string(m.kv_heads) +
                                            ") differs from model.heads (" + std::to_string(m.heads) +
                                            "): model.attention.kind \"mha\" has one K and V head per " +
                                            "query head (fewer KV heads is \"gqa\")");
      m.kv_heads = m.heads;  // mha; mla: every head has its own K and V after the up-projection
    }
  }
  if (m.kv_heads == m.heads && m.attention == AttentionKind::gqa) m.attention = AttentionKind::mha;
  m.gated_mlp = shape_bool(model, "gated_mlp");
  m.ffn_hidden = json_fields::member_or_null(model, "ffn_hidden")
                     ? shape_int(model, "ffn_hidden", shape_limits::kFfn)
                     : (m.gated_mlp ? int(std::ceil(8.0 / 3.0 * m.hidden / 256.0)) * 256 : 4 * m.hidden);
  m.vocab = json_fields::member_or_null(model, "vocab") ? shape_int(model, "vocab", shape_limits::kVocab) : 32000;
  m.tied_embeddings = shape_bool(model, "tied_embeddings");
  m.dropout = shape_bool(model, "dropout");
  if (m.head_dim_explicit == 0 && m.hidden % m.heads != 0)
    throw_invalid("model.heads", "model.hidden (" + std::to_string(m.hidden) + ") must be divisible by model.heads (" +
                                     std::to_string(m.heads) + "), or give model.attention.head_dim");
  if (m.heads % m.kv_heads != 0) throw_invalid("model.kv_heads", "model.heads must be a multiple of model.kv_heads");
  if (const auto* o = json_fields::member_or_null(model, "moe")) parse_moe(*o, m);
  const auto* name = json_fields::member_or_null(model, "name");
  m.name = name ? json_fields::string(*name, "model.name") : std::string("custom");
  m.context_tokens = context_tokens(model);
  m.source = "explicit shapes in the workload";
  return m;
}

namespace {

nlohmann::json attention_json(const ModelShape& m) {
  nlohmann::json a = {{"kind", std::string(to_string(m.attention))}, {"head_dim", m.head_dim()}};
  if (m.attention == AttentionKind::gqa) a["kv_heads"] = m.kv_heads;
  if (m.attention == AttentionKind::mla) {
    a["kv_lora_rank"] = m.kv_lora_rank;
    a["q_lora_rank"] = m.q_lora_rank > 0 ? nlohmann::json(m.q_lora_rank) : nlohmann::json(nullptr);
    a["rope_head_dim"] = m.rope_head_dim;
    a["v_head_dim"] = m.v_head_dim();
  }
  if (m.attention_window > 0) {
    a["window"] = m.attention_window;
    a["full_every"] = m.full_attention_every > 0 ? nlohmann::json(m.full_attention_every) : nlohmann::json(nullptr);
  }
  return a;
}

nlohmann::json moe_json(const ModelShape& m) {
  if (!m.moe.enabled()) return nullptr;
  const MoeShape& e = m.moe;
  return {{"experts", e.experts},
          {"top_k", e.top_k},
          {"shared_experts", e.shared_experts},
          {"expert_ffn_hidden", e.expert_ffn_hidden},
          {"dense_layers", e.dense_layers},
          {"moe_every", e.moe_every},
          {"moe_layers", m.moe_layers()},
          {"router", e.router},
          {"capacity_factor", e.capacity_factor ? nlohmann::json(*e.capacity_factor) : nlohmann::json(nullptr)},
          {"expert_weights", e.expert_weights.empty() ? nlohmann::json(nullptr) : nlohmann::json(e.expert_weights)}};
}

}  // namespace

nlohmann::json to_json(const ModelShape& m) {
  return {{"name", m.name},
          {"layers", m.layers},
          {"hidden", m.hidden},
          {"heads", m.heads},
          {"kv_heads", m.kv_heads},
          {"ffn_hidden", m.ffn_hidden},
          {"vocab", m.vocab},
          {"gated_mlp", m.gated_mlp},
          {"tied_embeddings", m.tied_embeddings},
          {"dropout", m.dropout},
          {"attention", attention_json(m)},
          {"moe", moe_json(m)},
          {"params_b", m.total_params() / 1e9},
          {"active_params_b", m.active_params() / 1e9},
          {"context_tokens", m.context_tokens > 0 ? nlohmann::json(m.context_tokens) : nlohmann::json()},
          {"context_tokens_extended",
           m.context_tokens_extended > 0 ? nlohmann::json(m.context_tokens_extended) : nlohmann::json()},
          {"source", m.source}};
}

}  // namespace linkwise::planner
