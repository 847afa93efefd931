// Model presets (published shapes with their sources) and the params_b-only shape rule.
#include <algorithm>
#include <cmath>

#include <nlohmann/json.hpp>

#include "linkwise/error.hpp"
#include "linkwise/planner/model.hpp"

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

int json_int(const nlohmann::json& obj, const char* key, const std::string& field) {
  const auto& v = obj.at(key);
  if (!v.is_number_integer() && !(v.is_number_float() && std::floor(v.get<double>()) == v.get<double>()))
    throw_invalid(field, field + " must be an integer, got " + v.dump());
  const double d = v.get<double>();
  if (d <= 0) throw_invalid(field, field + " must be positive, got " + v.dump());
  if (d > 1e9) throw_invalid(field, field + " is out of range: " + v.dump());
  return int(d);
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

ModelShape parse_model(const nlohmann::json& model) {
  if (!model.is_object()) throw_invalid("model", "model must be an object: {\"preset\": ...}, {\"params_b\": ...} or explicit shapes");
  if (model.contains("preset")) {
    if (!model["preset"].is_string()) throw_invalid("model.preset", "model.preset must be a string");
    return preset(model["preset"].get<std::string>());
  }
  if (model.contains("params_b") && !model.contains("layers")) {
    if (!model["params_b"].is_number()) throw_invalid("model.params_b", "model.params_b must be a number");
    int vocab = 32000;
    if (model.contains("vocab")) vocab = json_int(model, "vocab", "model.vocab");
    return shape_from_params(model["params_b"].get<double>(), vocab);
  }
  ModelShape m;
  for (const char* key : {"layers", "hidden", "heads"})
    if (!model.contains(key))
      throw_invalid(std::string("model.") + key,
                    std::string("model.") + key + " is required (or give model.preset or model.params_b)");
  m.layers = json_int(model, "layers", "model.layers");
  m.hidden = json_int(model, "hidden", "model.hidden");
  m.heads = json_int(model, "heads", "model.heads");
  m.kv_heads = model.contains("kv_heads") && !model["kv_heads"].is_null() ? json_int(model, "kv_heads", "model.kv_heads") : m.heads;
  m.gated_mlp = model.value("gated_mlp", false);
  m.ffn_hidden = model.contains("ffn_hidden") ? json_int(model, "ffn_hidden", "model.ffn_hidden")
                                              : (m.gated_mlp ? int(std::ceil(8.0 / 3.0 * m.hidden / 256.0)) * 256 : 4 * m.hidden);
  m.vocab = model.contains("vocab") ? json_int(model, "vocab", "model.vocab") : 32000;
  m.tied_embeddings = model.value("tied_embeddings", false);
  m.dropout = model.value("dropout", false);
  if (m.hidden % m.heads != 0)
    throw_invalid("model.heads", "model.hidden (" + std::to_string(m.hidden) + ") must be divisible by model.heads (" +
                                     std::to_string(m.heads) + ")");
  if (m.heads % m.kv_heads != 0)
    throw_invalid("model.kv_heads", "model.heads must be a multiple of model.kv_heads");
  m.name = model.value("name", std::string("custom"));
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
