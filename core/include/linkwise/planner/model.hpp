// The model the planner reasons about: a dense decoder-only transformer, from a named preset with
// published shapes, from explicit shapes, or from a parameter count alone (the shape rule below).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace linkwise::planner {

struct ModelShape {
  std::string name;        // preset name, or "custom" / "params_b=70"
  int layers = 0;
  int hidden = 0;
  int heads = 0;
  int kv_heads = 0;        // grouped-query attention; equals heads for multi-head attention
  int ffn_hidden = 0;
  int vocab = 0;
  bool gated_mlp = false;  // SwiGLU: three ffn matrices (gate, up, down) instead of two
  bool tied_embeddings = false;  // input embedding and output projection share one matrix
  bool dropout = false;    // dropout layers store masks (GPT-3 era); modern recipes train without
  std::string source;      // where the shapes come from

  int head_dim() const { return hidden / heads; }
  // Weights of one transformer layer: attention (Q, K, V, O), MLP, two norms.
  double layer_params() const;
  // One vocab x hidden matrix.
  double embedding_params() const { return double(vocab) * hidden; }
  // Everything: layers, embeddings (one or two matrices), final norm.
  double total_params() const;
};

// Presets, each with the published configuration it was taken from.
std::vector<std::string> preset_names();
const ModelShape& preset(std::string_view name);  // throws not_found naming "model.preset"

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
