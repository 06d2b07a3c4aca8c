// SPDX-License-Identifier: Apache-2.0
// gnio diagnose NAME: the taxonomy row of an error code, then the checks that
// tell its causes apart.
#include <cstdlib>
#include <iostream>
#include <memory>

#include "commands.hpp"
#include "gnio/diagnose.hpp"
#include "options.hpp"

namespace gnio::cli {

namespace {

struct DiagnoseOptions {
  std::string name;
  TargetOptions target;
  RootOptions roots;
  bool json = false;
};

std::optional<Errc> parse_code(const std::string& text) {
  if (auto e = errc_from_name(text)) return e;
  // The numeric code, as it appears in logs and device status words.
  char* end = nullptr;
  long v = std::strtol(text.c_str(), &end, 10);
  if (!text.empty() && *end == '\0') {
    for (const auto& row : taxonomy())
      if (static_cast<long>(row.code) == v) return row.code;
  }
  return std::nullopt;
}

void run_diagnose(const DiagnoseOptions& o) {
  std::optional<Errc> code = parse_code(o.name);
  if (!code) {
    std::cerr << "gnio diagnose: unknown error name '" << o.name << "'; valid names (any case, or the number): "
              << valid_error_names() << "\n";
    exit_with(2);
  }
  doctor::Environment env = make_environment(o.roots);
  Diagnosis d = diagnose(*code, env, make_request(o.target));
  if (o.json) std::cout << to_json(d) << "\n";
  else std::cout << format_diagnosis(d);
  if (int rc = exit_code(d); rc != 0) exit_with(rc);
}

}  // namespace

void add_diagnose_command(CLI::App& app) {
  auto o = std::make_shared<DiagnoseOptions>();
  CLI::App* cmd = app.add_subcommand(
      "diagnose", "Explain an error code (NOT_SUPPORTED, DRIVER, ...) and run the checks that tell its causes apart");
  cmd->add_option("name", o->name, "Error name (" + valid_error_names() + "), any case, or its numeric code")
      ->required()
      ->type_name("NAME");
  add_target_options(cmd, o->target, true);
  add_root_options(cmd, o->roots);
  cmd->add_flag("--json", o->json, "Print the diagnosis as JSON");
  cmd->footer(
      "Prints the taxonomy row of the code as gnio surfaces it (where it shows up, the likely causes, what to\n"
      "check, whether a retry can help), then runs the doctor checks that tell its causes apart; NOT_SUPPORTED\n"
      "also evaluates both capability axes. Every gnio error message ends with 'see: gnio diagnose NAME'.\n"
      "Exit status 0, or 1 when one of the checks FAILs, or 2 for an unknown name.\n\n"
      "Examples:\n"
      "  gnio diagnose DRIVER                 toolkit/driver/DOCA version checks\n"
      "  gnio diagnose not_supported --nic synthetic:count=10 --gpu auto\n"
      "                                       which capability axis refuses what\n"
      "  gnio diagnose AGAIN                  why draining comes before a retry\n"
      "  gnio diagnose 3                      the same as BAD_STATE\n"
      "AGAIN is the only code that wants a retry (after a drain); for every other code a retry loop hides the "
      "cause.");
  cmd->callback([o] { run_diagnose(*o); });
}

}  // namespace gnio::cli
