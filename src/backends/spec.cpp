// SPDX-License-Identifier: Apache-2.0
#include "backends/spec.hpp"

#include <charconv>
#include <cmath>
#include <system_error>
#include <vector>

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

bool is_key(std::string_view key, std::initializer_list<std::string_view> accepted) {
  for (std::string_view a : accepted)
    if (a == key) return true;
  return false;
}

// One comma-separated field; `quoted` when the whole field was in quotes
// (then it is an argument, whatever it contains).
struct Field {
  std::string text;
  bool quoted = false;
};

// Splits the text after ':' at commas outside double quotes. A quote opens
// a whole field ("a,b.pcap") or a value (key="x,y"); inside, \" is a quote
// and \\ a backslash.
Result<std::vector<Field>> split_fields(std::string_view text, std::string_view rest) {
  std::vector<Field> fields;
  size_t i = 0;
  while (i < rest.size()) {
    Field f;
    while (i < rest.size() && rest[i] != ',' && rest[i] != '"') f.text += rest[i++];
    if (i < rest.size() && rest[i] == '"') {
      if (!f.text.empty() && f.text.back() != '=') {
        return spec_error(text, "a double quote inside field '" + f.text +
                                    "\"...'; quote a whole field (\"a,b\") or a value (key=\"a,b\")");
      }
      f.quoted = f.text.empty();
      ++i;
      bool closed = false;
      while (i < rest.size() && !closed) {
        char c = rest[i++];
        if (c == '\\' && i < rest.size() && (rest[i] == '"' || rest[i] == '\\')) {
          f.text += rest[i++];
        } else if (c == '"') {
          closed = true;
        } else {
          f.text += c;
        }
      }
      if (!closed) {
        return spec_error(text, "the double quote before '" + f.text + "' is not closed; close it with '\"'");
      }
      if (i < rest.size() && rest[i] != ',') {
        return spec_error(text, "text '" + std::string(rest.substr(i, rest.find(',', i) - i)) + "' after the quoted '" +
                                    f.text + "'; a closing quote ends its field: put a comma after it");
      }
    }
    fields.push_back(std::move(f));
    ++i;  // the comma
  }
  return fields;
}

// For a driver with an argument: the spec with the argument and the fields
// after it that are not options in double quotes, in case a comma belongs
// to the argument (a file name).
std::string comma_hint(std::string_view driver, bool has_arg, const std::vector<Field>& fields,
                       std::initializer_list<std::string_view> accepted) {
  if (!has_arg || fields[0].quoted) return "";
  std::string joined = fields[0].text;
  size_t i = 1;
  for (; i < fields.size(); ++i) {
    size_t eq = fields[i].text.find('=');
    if (!fields[i].quoted && eq != std::string::npos && is_key(fields[i].text.substr(0, eq), accepted)) break;
    joined += "," + fields[i].text;
  }
  std::string fixed = std::string(driver) + ":\"" + joined + "\"";
  for (; i < fields.size(); ++i) fixed += "," + fields[i].text;
  return "; if a comma belongs to the argument (a file name), put the argument in double quotes: '" + fixed + "'";
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

  auto split = split_fields(text, rest);
  if (!split) return split.status();
  const std::vector<Field>& fields = *split;

  size_t first = 0;
  if (!fields.empty() && arg != ArgMode::None &&
      (arg == ArgMode::Required || fields[0].quoted || fields[0].text.find('=') == std::string::npos)) {
    s.arg_ = fields[0].text;
    first = 1;
  }
  if (arg == ArgMode::Required && s.arg_.empty()) {
    return spec_error(text, "driver '" + s.driver_ + "' needs an argument after ':' (e.g. '" +
                                s.driver_ + ":FILE'); none was given");
  }

  for (size_t i = first; i < fields.size(); ++i) {
    std::string_view f = fields[i].text;
    size_t eq = f.find('=');
    if (fields[i].quoted || eq == std::string_view::npos || eq == 0 || eq + 1 == f.size()) {
      return spec_error(text, "field '" + std::string(f) + "' is not of the form key=value; accepted keys: " +
                                  join(accepted) + comma_hint(s.driver_, first == 1, fields, accepted));
    }
    std::string key(f.substr(0, eq));
    std::string value(f.substr(eq + 1));
    if (!is_key(key, accepted)) {
      return spec_error(text, "unknown option '" + key + "' (value '" + value + "') for driver '" +
                                  s.driver_ + "'; accepted keys: " +
                                  (accepted.size() == 0 ? std::string("none") : join(accepted)) +
                                  comma_hint(s.driver_, first == 1, fields, accepted));
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
