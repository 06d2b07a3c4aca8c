// SPDX-License-Identifier: Apache-2.0
// Version parsing and the compatibility tables of data/compat.
#include <cctype>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "doctor/compat_data.hpp"
#include "doctor/util.hpp"
#include "gnio/doctor.hpp"

namespace gnio::doctor {

namespace {

using nlohmann::json;

std::vector<long> version_parts(std::string_view v) {
  std::vector<long> parts;
  size_t i = 0;
  while (i < v.size()) {
    size_t j = i;
    while (j < v.size() && std::isdigit(static_cast<unsigned char>(v[j]))) ++j;
    if (j == i) break;
    parts.push_back(std::strtol(std::string(v.substr(i, j - i)).c_str(), nullptr, 10));
    if (j >= v.size() || v[j] != '.') break;
    i = j + 1;
  }
  return parts;
}

// The first dotted number ("580.65.06") at or after `from`.
std::string version_token(std::string_view text, size_t from) {
  for (size_t i = from; i < text.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(text[i]))) continue;
    // Digits glued to a word ("x86_64") are not a version; `from` itself may
    // follow a prefix ("V13.0.88").
    if (i > from && (std::isalnum(static_cast<unsigned char>(text[i - 1])) || text[i - 1] == '.')) continue;
    size_t j = i;
    bool dot = false;
    while (j < text.size() && (std::isdigit(static_cast<unsigned char>(text[j])) || text[j] == '.')) {
      dot = dot || text[j] == '.';
      ++j;
    }
    if (dot) {
      std::string tok(text.substr(i, j - i));
      while (!tok.empty() && tok.back() == '.') tok.pop_back();
      return tok;
    }
    i = j;
  }
  return {};
}

Status table_error(const std::string& where, const std::string& what) {
  return Status(Errc::InvalidValue, Layer::Doctor,
                "compatibility table " + where + " is malformed: " + what +
                    "; restore it from data/compat in the gnio sources or drop --compat-dir");
}

}  // namespace

int compare_versions(std::string_view a, std::string_view b) {
  auto pa = version_parts(a), pb = version_parts(b);
  size_t n = std::max(pa.size(), pb.size());
  for (size_t i = 0; i < n; ++i) {
    long x = i < pa.size() ? pa[i] : 0, y = i < pb.size() ? pb[i] : 0;
    if (x != y) return x < y ? -1 : 1;
  }
  return 0;
}

std::string parse_nvcc_version(std::string_view text) {
  size_t rel = text.find("release ");
  if (rel == std::string_view::npos) return {};
  size_t v = text.find(", V", rel);
  if (v != std::string_view::npos) {
    std::string full = version_token(text, v + 3);
    if (!full.empty()) return full;
  }
  return version_token(text, rel + 8);
}

std::string parse_nvidia_driver_version(std::string_view text) {
  size_t mod = text.find("Kernel Module");
  if (mod == std::string_view::npos) return {};
  return version_token(text, mod);
}

std::string cuda_version_text(int version) {
  if (version <= 0) return {};
  return std::to_string(version / 1000) + "." + std::to_string((version % 1000) / 10);
}

Result<CompatTables> CompatTables::load(const std::string& dir) {
  std::string driver_text, doca_text;
  std::string driver_where = "cuda_driver.json (built in)", doca_where = "doca_cuda.json (built in)";
  if (dir.empty()) {
    driver_text = detail::kCudaDriverJson;
    doca_text = detail::kDocaCudaJson;
  } else {
    driver_where = dir + "/cuda_driver.json";
    doca_where = dir + "/doca_cuda.json";
    auto a = detail::read_file(driver_where);
    auto b = detail::read_file(doca_where);
    if (!a || !b)
      return Status(Errc::NotFound, Layer::Doctor,
                    "compatibility table " + (!a ? driver_where : doca_where) +
                        " cannot be read: point --compat-dir at a copy of data/compat, or drop it");
    driver_text = std::move(*a);
    doca_text = std::move(*b);
  }

  CompatTables t;
  json d = json::parse(driver_text, nullptr, false);
  if (d.is_discarded() || !d.is_object()) return table_error(driver_where, "not a JSON object");
  try {
    t.cuda_driver_source_ = d.value("source", "");
    for (const auto& row : d.at("minor_version_compatibility"))
      t.minor_compat_.push_back({row.at("cuda_major").get<int>(), row.at("min_driver").get<std::string>()});
    for (const auto& row : d.at("toolkit_driver"))
      t.toolkit_driver_.push_back({row.at("toolkit").get<std::string>(), row.at("min_driver").get<std::string>()});
  } catch (const json::exception& e) {
    return table_error(driver_where, e.what());
  }

  json c = json::parse(doca_text, nullptr, false);
  if (c.is_discarded() || !c.is_object()) return table_error(doca_where, "not a JSON object");
  try {
    t.doca_cuda_source_ = c.value("source", "");
    for (const auto& row : c.at("rows"))
      t.doca_cuda_.push_back({row.at("doca_min").get<std::string>(), row.at("doca_below").get<std::string>(),
                              row.at("cuda_min").get<std::string>(), row.at("cuda_below").get<std::string>(),
                              row.value("note", "")});
  } catch (const json::exception& e) {
    return table_error(doca_where, e.what());
  }
  return t;
}

std::optional<std::string> CompatTables::min_driver_for(std::string_view toolkit) const {
  auto want = version_parts(toolkit);
  if (want.size() < 2) return std::nullopt;
  for (const auto& row : toolkit_driver_) {
    auto have = version_parts(row.toolkit);
    if (have.size() >= 2 && have[0] == want[0] && have[1] == want[1]) return row.min_driver;
  }
  return std::nullopt;
}

std::optional<std::string> CompatTables::min_driver_minor_compat(int cuda_major) const {
  for (const auto& row : minor_compat_)
    if (row.cuda_major == cuda_major) return row.min_driver;
  return std::nullopt;
}

std::string CompatTables::newest_toolkit_for(std::string_view driver) const {
  std::string best;
  for (const auto& row : toolkit_driver_)
    if (compare_versions(driver, row.min_driver) >= 0 && (best.empty() || compare_versions(row.toolkit, best) > 0))
      best = row.toolkit;
  return best;
}

const DocaCudaRow* CompatTables::doca_row(std::string_view doca_version) const {
  for (const auto& row : doca_cuda_)
    if (compare_versions(doca_version, row.doca_min) >= 0 && compare_versions(doca_version, row.doca_below) < 0)
      return &row;
  return nullptr;
}

}  // namespace gnio::doctor
