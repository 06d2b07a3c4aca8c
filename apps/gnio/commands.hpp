// SPDX-License-Identifier: Apache-2.0
// The gnio subcommands. Each lives in its own cmd_<name>.cpp and registers
// itself on the top-level app; to add one, declare add_<name>_command here,
// implement it in cmd_<name>.cpp and call it from main.cpp.
#pragma once

#include <CLI/CLI.hpp>

namespace gnio::cli {

void add_caps_command(CLI::App& app);
void add_doctor_command(CLI::App& app);
void add_diagnose_command(CLI::App& app);
// `gnio top` (cmd_top.cpp)
void add_top_command(CLI::App& app);
// `gnio run packet-processing` (run/cmd_run.cpp)
void add_run_command(CLI::App& app);

}  // namespace gnio::cli
