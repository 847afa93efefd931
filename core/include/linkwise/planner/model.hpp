// The model the planner reasons about: a decoder-only transformer, dense or mixture-of-experts, with
// multi-head, grouped-query or multi-head latent attention (MLA, DeepSeek-V2/V3), from a named
// preset with published shapes, from explicit shapes, or from a parameter count alone (the shape
// rule below).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace linkwise::planner {

enum class AttentionKind { mha, gqa, mla };
std::string_view to_string(AttentionKind kind) noexcept;

// Mixture-of-experts MLPs (GShard/Switch lineage, DeepSeekMoE's shared experts): `experts` routed
// experts of `expert_ffn_hidden`, each token sent to `top_k` of them, plus `shared_experts` every
// token passes through. The first `dense_layers` layers keep a dense MLP of ffn_hidden; after them
// every `moe_every`-th layer is a MoE layer (Llama 4 Maverick: 2), the others dense.
struct MoeShape {
  int experts = 0;  // 0: a dense model
  int top_k = 0;
  int shared_experts = 0;
  int expert_ffn_hidden = 0;
  int dense_layers = 0;
  int moe_every = 1;
  std::string router = "softmax";         // softmax | sigmoid (DeepSeek-V3); the cost is the same
  std::optional<double> capacity_factor;  // tokens beyond capacity_factor x the mean are dropped
  // The routed experts' stored format where the released checkpoint fixes it: "mxfp4" (OCP MX FP4,
  // 4-bit values with an 8-bit scale per 32: 4.25 bits per weight; gpt-oss). Serving engines keep
  // it whatever the job's compute precision (weight-only kernels dequantise in registers on Hopper
  // and Ampere); training dequantises it to the job's precision. Empty: the job's precision.
  std::string expert_weights;
  bool enabled() const { return experts > 0; }
};

struct ModelShape {
  std::string name;  // preset name, or "custom" / "params_b=70"
  int layers = 0;
  int hidden = 0;
  int heads = 0;
  int kv_heads = 0;    // grouped-query attention; equals heads for multi-head attention
  int ffn_hidden = 0;  // the dense MLP's width (dense layers)
  int vocab = 0;
  bool gated_mlp = false;                        // SwiGLU: three ffn matrices (gate, up, down) instead of two
  bool tied_embeddings = false;                  // input embedding and output projection share one matrix
  bool dropout = false;                          // dropout layers store masks (GPT-3 era); modern recipes train without
  std::string source;                            // where the shapes come from
  AttentionKind attention = AttentionKind::gqa;  // gqa with kv_heads == heads is mha
  int head_dim_explicit = 0;  // attention.head_dim (Qwen3, Gemma 3, gpt-oss: not hidden / heads); 0: hidden / heads
  // MLA (DeepSeek-V2 arXiv 2405.04434 section 2.1): K and V compressed into a kv_lora_rank latent
  // (what the KV cache holds) plus a shared rope_head_dim key; Q through a q_lora_rank latent (0: none).
  int kv_lora_rank = 0, q_lora_rank = 0, rope_head_dim = 0;
  int v_head_dim_explicit = 0;  // MLA's value head size; 0: head_dim
  // Sliding-window attention (attention.window, attention.full_every): a windowed layer's queries
  // attend to the last `attention_window` tokens only and its KV cache keeps only those; every
  // full_attention_every-th layer keeps full attention (gpt-oss: 2, Gemma 3: 6; 0: every layer
  // windowed, Mistral-7B v0.1). attention_window 0: no window.
  int attention_window = 0, full_attention_every = 0;
  // The context its publisher states the model supports (tokens; 0: not known, as for custom
  // shapes), and the longer one its card documents with RoPE scaling (YaRN; 0: none stated).
  int context_tokens = 0, context_tokens_extended = 0;
  MoeShape moe;

  int head_dim() const { return head_dim_explicit > 0 ? head_dim_explicit : hidden / heads; }
  int v_head_dim() const { return v_head_dim_explicit > 0 ? v_head_dim_explicit : head_dim(); }
  int qk_head_dim() const { return head_dim() + (attention == AttentionKind::mla ? rope_head_dim : 0); }
  int moe_layers() const { return moe.enabled() ? (layers - moe.dense_layers) / moe.moe_every : 0; }
  int windowed_layers() const {
    if (attention_window <= 0) return 0;
    return full_attention_every > 0 ? layers - layers / full_attention_every : layers;
  }
  int dense_mlp_layers() const { return layers - moe_layers(); }
  // Weights of the attention block (Q, K, V, O; MLA's down/up projections and latent norms).
  double attention_params() const;
  // Weights of one dense layer: attention, MLP, two norms.
  double layer_params() const;
  // One routed expert (gate, up, down or fc1, fc2).
  double expert_params() const;
  // One MoE layer's weights outside the routed experts: attention, shared experts, router, norms.
  double moe_layer_base_params() const;
  // One vocab x hidden matrix.
  double embedding_params() const { return double(vocab) * hidden; }
  // Everything: layers, embeddings (one or two matrices), final norm.
  double total_params() const;
  // What one token uses: routed experts counted top_k times, not `experts` times.
  double active_params() const;
  // KV-cache elements per token per layer, whole model (K and V of every KV head; MLA: the latent
  // and the rope key, shared by all heads).
  double kv_elements_per_token_layer() const;
};

// Presets, each with the published configuration it was taken from.
std::vector<std::string> preset_names();
const ModelShape& preset(std::string_view name);  // case-insensitive; throws not_found naming "model.preset"
const std::vector<ModelShape>& presets();

// The shape rule for {"params_b": N}: a Llama-style model (SwiGLU, GQA with 8 KV heads, head size
// 128, ffn = 8/3 hidden rounded up to 256) whose depth-to-width ratio follows Llama 2 7B/13B
// (hidden = 128 x layers): hidden = cbrt(128 N / 10) rounded to a multiple of 1024
// (of 128 below 1024), then as many
// layers as bring the count nearest N. `vocab` defaults to 32000.
ModelShape shape_from_params(double params_b, int vocab = 32000);

// Parses the workload's "model" object (preset | params_b | explicit shapes); throws Error naming
// "model.<field>".
ModelShape parse_model(const nlohmann::json& model);

nlohmann::json to_json(const ModelShape& shape);

}  // namespace linkwise::planner
