// Model presets (published shapes with their sources) and the params_b-only shape rule.
#include <algorithm>
#include <cmath>

#include <nlohmann/json.hpp>

#include "linkwise/error.hpp"
#include "linkwise/planner/model.hpp"
#include "../json_fields.hpp"

namespace linkwise::planner {

double ModelShape::layer_params() const {
  const double h = hidden;
  const double kv_width = double(kv_heads) * head_dim();
  const double attention = h * h /*Q*/ + 2.0 * h * kv_width /*K,V*/ + h * h /*O*/;
  const double mlp = (gated_mlp ? 3.0 : 2.0) * h * ffn_hidden;
  const double norms = 2.0 * h;
  return attention + mlp + norms;
}

double ModelShape::total_params() const {
  return layers * layer_params() + (tied_embeddings ? 1.0 : 2.0) * embedding_params() + hidden;
}

namespace {

ModelShape make(std::string name, int layers, int hidden, int heads, int kv_heads, int ffn, int vocab,
                bool gated, bool tied, bool dropout, std::string source) {
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

const std::vector<ModelShape>& presets() {
  static const std::vector<ModelShape> all = {
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
      make("mistral-7b", 32, 4096, 32, 8, 14336, 32000, true, false, false,
           "huggingface.co/mistralai/Mistral-7B-v0.1 config.json; Jiang et al. 2023 (arXiv 2310.06825) Table 1"),
      make("qwen2.5-72b", 80, 8192, 64, 8, 29568, 152064, true, false, false,
           "huggingface.co/Qwen/Qwen2.5-72B config.json; Qwen2.5 technical report (arXiv 2412.15115) Table 1"),
  };
  return all;
}

// A positive whole number of the model's shape, at most `maximum` (an error names the field).
int shape_int(const nlohmann::json& model, const char* key, long long maximum) {
  const std::string field = std::string("model.") + key;
  return static_cast<int>(json_fields::integer_in(model.at(key), field, 1, maximum));
}

bool shape_bool(const nlohmann::json& model, const char* key) {
  const nlohmann::json* v = json_fields::member_or_null(model, key);
  return v && json_fields::boolean(*v, std::string("model.") + key);
}

}  // namespace

std::vector<std::string> preset_names() {
  std::vector<std::string> names;
  for (const auto& p : presets()) names.push_back(p.name);
  return names;
}

const ModelShape& preset(std::string_view name) {
  for (const auto& p : presets())
    if (p.name == name) return p;
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
  m.name = "params_b=" + nlohmann::json(params_b).dump();
  m.source = "linkwise shape rule for params_b (Llama-style: SwiGLU, GQA 8 KV heads, head 128, hidden = 128 x layers)";
  return m;
}

// The shape ranges: beyond any published model, and small enough that the search's divisor loops
// (over heads and layers) and every product of shapes stay cheap and inside 64 bits.
namespace shape_limits {
constexpr long long kLayers = 1LL << 14, kHidden = 1LL << 20, kHeads = 1LL << 16, kFfn = 1LL << 22, kVocab = 1LL << 24;
}

ModelShape parse_model(const nlohmann::json& model) {
  if (!model.is_object())
    throw_invalid("model", "model must be an object: {\"preset\": ...}, {\"params_b\": ...} or explicit shapes");
  static constexpr const char* kShapeFields[] = {"layers", "hidden", "heads", "kv_heads", "ffn_hidden", "vocab",
                                                 "gated_mlp", "tied_embeddings", "dropout"};
  for (auto it = model.begin(); it != model.end(); ++it) {
    const std::string& key = it.key();
    const bool known = key == "preset" || key == "params_b" || key == "name" ||
                       std::find(std::begin(kShapeFields), std::end(kShapeFields), key) != std::end(kShapeFields);
    if (!known)
      throw_invalid("model." + key, "unknown field 'model." + key +
                                        "'; expected preset, params_b, name or the shapes layers, hidden, heads, kv_heads, "
                                        "ffn_hidden, vocab, gated_mlp, tied_embeddings, dropout");
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
      throw_unknown_reference(e.field(), e.what());
    }
  }
  if (const auto* p = json_fields::member_or_null(model, "params_b")) {
    for (const auto& [key, value] : model.items())
      if (key != "params_b" && key != "vocab" && key != "name")
        throw_invalid("model." + key, "model.params_b derives the whole shape; model." + key +
                                          " cannot be given with it (give params_b, or every shape field)");
    const double params_b = json_fields::number_in(*p, "model.params_b", 0, 1e5, false);
    const int vocab = model.contains("vocab") ? shape_int(model, "vocab", shape_limits::kVocab) : 32000;
    ModelShape m = shape_from_params(params_b, vocab);
    if (const auto* name = json_fields::member_or_null(model, "name")) m.name = json_fields::string(*name, "model.name");
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
  m.kv_heads = json_fields::member_or_null(model, "kv_heads") ? shape_int(model, "kv_heads", shape_limits::kHeads) : m.heads;
  m.gated_mlp = shape_bool(model, "gated_mlp");
  m.ffn_hidden = json_fields::member_or_null(model, "ffn_hidden")
                     ? shape_int(model, "ffn_hidden", shape_limits::kFfn)
                     : (m.gated_mlp ? int(std::ceil(8.0 / 3.0 * m.hidden / 256.0)) * 256 : 4 * m.hidden);
  m.vocab = json_fields::member_or_null(model, "vocab") ? shape_int(model, "vocab", shape_limits::kVocab) : 32000;
  m.tied_embeddings = shape_bool(model, "tied_embeddings");
  m.dropout = shape_bool(model, "dropout");
  if (m.hidden % m.heads != 0)
    throw_invalid("model.heads", "model.hidden (" + std::to_string(m.hidden) + ") must be divisible by model.heads (" +
                                     std::to_string(m.heads) + ")");
  if (m.heads % m.kv_heads != 0)
    throw_invalid("model.kv_heads", "model.heads must be a multiple of model.kv_heads");
  const auto* name = json_fields::member_or_null(model, "name");
  m.name = name ? json_fields::string(*name, "model.name") : std::string("custom");
  m.source = "explicit shapes in the workload";
  return m;
}

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
          {"params_b", m.total_params() / 1e9},
          {"source", m.source}};
}

}  // namespace linkwise::planner
