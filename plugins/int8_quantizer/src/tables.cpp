#include "tables.hpp"

#include <cmath>

namespace eulernpu::int8_quantizer {

std::optional<std::pair<double, double>> clip_bounds(const Node& n, const OwnedGraph& g) {
  double lo = n.attr_float("min", -INFINITY), hi = n.attr_float("max", INFINITY);
  for (size_t k = 1; k <= 2; ++k) {
    if (n.input(k).empty()) continue;
    const sdk::OwnedTensor* t = g.initializer(n.input(k));
    if (!t || t->dtype != ENP_DTYPE_FLOAT32 || t->bytes.size() != 4) return std::nullopt;
    (k == 1 ? lo : hi) = float_values(*t)[0];
  }
  return std::make_pair(lo, hi);
}

std::optional<std::function<double(double)>> unary_function(const Node& n, const OwnedGraph& g) {
  const std::string& op = n.op_type;
  // Ops with more than their data input take them as constants only (Clip).
  if (op == "Relu") return [](double x) { return x > 0 ? x : 0.0; };
  if (op == "Clip") {
    const auto r = clip_bounds(n, g);
    if (!r) return std::nullopt;
    return [lo = r->first, hi = r->second](double x) { return std::min(std::max(x, lo), hi); };
  }
  if (n.inputs.size() != 1) return std::nullopt;
  if (op == "LeakyRelu") {
    const double a = n.attr_float("alpha", 0.01);
    return [a](double x) { return x >= 0 ? x : a * x; };
  }
  if (op == "HardSigmoid") {
    const double a = n.attr_float("alpha", 0.2), b = n.attr_float("beta", 0.5);
    return [a, b](double x) { return std::max(0.0, std::min(1.0, a * x + b)); };
  }
  if (op == "HardSwish") {
    return [](double x) { return x * std::max(0.0, std::min(1.0, x / 6.0 + 0.5)); };
  }
  if (op == "Sigmoid") return [](double x) { return 1.0 / (1.0 + std::exp(-x)); };
  if (op == "Tanh") return [](double x) { return std::tanh(x); };
  if (op == "Gelu") {
    if (n.attr_string("approximate", "none") == "tanh") {
      return [](double x) {
        const double c = std::sqrt(2.0 / M_PI);
        return 0.5 * x * (1.0 + std::tanh(c * (x + 0.044715 * x * x * x)));
      };
    }
    return [](double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); };
  }
  if (op == "Elu") {
    const double a = n.attr_float("alpha", 1.0);
    return [a](double x) { return x > 0 ? x : a * (std::exp(x) - 1.0); };
  }
  if (op == "Selu") {
    const double a = n.attr_float("alpha", 1.67326319217681884765625);
    const double gamma = n.attr_float("gamma", 1.05070102214813232421875);
    return [a, gamma](double x) { return gamma * (x > 0 ? x : a * (std::exp(x) - 1.0)); };
  }
  if (op == "Softplus")
    return [](double x) { return std::log1p(std::exp(-std::abs(x))) + std::max(x, 0.0); };
  if (op == "Softsign") return [](double x) { return x / (1.0 + std::abs(x)); };
  if (op == "Erf") return [](double x) { return std::erf(x); };
  if (op == "Exp") return [](double x) { return std::exp(x); };
  if (op == "Neg") return [](double x) { return -x; };
  if (op == "Abs") return [](double x) { return std::abs(x); };
  return std::nullopt;
}

}  // namespace eulernpu::int8_quantizer
