#include "backends/spec.hpp"

#include <charconv>
#include <cmath>
#include <system_error>

namespace gnio::backend {

namespace {

std::string join(std::initializer_list<std::string_view> words) {
  std::string s;
  for (std::string_view w : words) {
    if (!s.empty()) s += ", ";
    s += w;
  }
  return s;
}

Status spec_error(std::string_view text, std::string message) {
  return {Errc::InvalidValue, Layer::Backend, "queue spec '" + std::string(text) + "': " + message};
}

}  // namespace

std::string_view spec_driver(std::string_view spec) { return spec.substr(0, spec.find(':')); }

Result<Spec> Spec::parse(std::string_view text, ArgMode arg,
                         std::initializer_list<std::string_view> accepted) {
  Spec s;
  s.text_ = text;
  s.driver_ = spec_driver(text);
  size_t colon = text.find(':');
  std::string_view rest = colon == std::string_view::npos ? std::string_view() : text.substr(colon + 1);

  std::vector<std::string_view> fields;
  while (!rest.empty()) {
    size_t comma = rest.find(',');
    fields.push_back(rest.substr(0, comma));
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
  }

  size_t first = 0;
  if (!fields.empty() && arg != ArgMode::None &&
      (arg == ArgMode::Required || fields[0].find('=') == std::string_view::npos)) {
    s.arg_ = fields[0];
    first = 1;
  }
  if (arg == ArgMode::Required && s.arg_.empty()) {
    return spec_error(text, "driver '" + s.driver_ + "' needs an argument after ':' (e.g. '" +
                                s.driver_ + ":FILE'); none was given");
  }

  for (size_t i = first; i < fields.size(); ++i) {
    std::string_view f = fields[i];
    size_t eq = f.find('=');
    if (eq == std::string_view::npos || eq == 0 || eq + 1 == f.size()) {
      return spec_error(text, "field '" + std::string(f) +
                                  "' is not of the form key=value; accepted keys: " + join(accepted));
    }
    std::string key(f.substr(0, eq));
    std::string value(f.substr(eq + 1));
    bool known = false;
    for (std::string_view a : accepted) known = known || a == key;
    if (!known) {
      return spec_error(text, "unknown option '" + key + "' (value '" + value + "') for driver '" +
                                  s.driver_ + "'; accepted keys: " +
                                  (accepted.size() == 0 ? std::string("none") : join(accepted)));
    }
    if (s.find(key) != nullptr) {
      return spec_error(text, "option '" + key + "' is given twice; give it once");
    }
    s.options_.emplace_back(std::move(key), std::move(value));
  }
  return s;
}

const std::string* Spec::find(std::string_view key) const {
  for (const auto& [k, v] : options_) {
    if (k == key) return &v;
  }
  return nullptr;
}

Status Spec::invalid(std::string_view key, std::string_view problem, std::string_view fix) const {
  const std::string* v = find(key);
  return spec_error(text_, "option " + std::string(key) + "=" + (v ? *v : std::string()) + " " +
                               std::string(problem) + "; " + std::string(fix));
}

Result<uint64_t> Spec::u64(std::string_view key, uint64_t def, uint64_t min, uint64_t max) const {
  const std::string* v = find(key);
  if (v == nullptr) return def;
  uint64_t out = 0;
  auto [end, ec] = std::from_chars(v->data(), v->data() + v->size(), out);
  std::string range = "use " + std::string(key) + "=N with " + std::to_string(min) + " <= N <= " +
                      std::to_string(max);
  if (ec == std::errc::result_out_of_range || (ec == std::errc() && (out < min || out > max))) {
    return invalid(key, "is out of range", range);
  }
  if (ec != std::errc() || end != v->data() + v->size()) {
    return invalid(key, "is not a whole number", range);
  }
  return out;
}

Result<double> Spec::rate(std::string_view key, double max) const {
  const std::string* v = find(key);
  if (v == nullptr) return 0.0;
  double out = 0;
  auto [end, ec] = std::from_chars(v->data(), v->data() + v->size(), out);
  std::string fix = "use " + std::string(key) + "=R with 0 < R <= " + std::to_string(static_cast<uint64_t>(max)) +
                    " (packets per second; leave it out for no pacing)";
  if (ec != std::errc() || end != v->data() + v->size() || !std::isfinite(out)) {
    return invalid(key, "is not a number", fix);
  }
  if (out <= 0 || out > max) return invalid(key, "is out of range", fix);
  return out;
}

Result<std::string> Spec::choice(std::string_view key, std::string_view def,
                                 std::initializer_list<std::string_view> choices) const {
  const std::string* v = find(key);
  if (v == nullptr) return std::string(def);
  for (std::string_view c : choices) {
    if (c == *v) return *v;
  }
  return invalid(key, "is not an accepted value", "accepted values: " + join(choices));
}

}  // namespace gnio::backend
