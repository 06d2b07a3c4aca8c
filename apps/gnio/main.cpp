// SPDX-License-Identifier: Apache-2.0
// gnio: the command-line front end of the library's tools.
#include <CLI/CLI.hpp>

#include "commands.hpp"
#include "gnio/cuda_info.hpp"
#include "gnio/doctor.hpp"

int main(int argc, char** argv) {
  CLI::App app{"gnio: GPU-initiated packet I/O tools: capability discovery on both axes (NIC and CUDA), the "
               "environment doctor, and error diagnosis",
               "gnio"};
  app.set_version_flag("--version", [] {
    std::string v = "gnio " GNIO_VERSION_STRING;
#if GNIO_HAVE_CUDA
    v += " (CUDA runtime " + gnio::doctor::cuda_version_text(gnio::query_cuda_runtime().runtime_version) + ")";
#else
    v += " (built without CUDA: emulated device only)";
#endif
    return v;
  });
  app.require_subcommand(1);
  app.footer(
      "Examples:\n"
      "  gnio doctor                      is this host ready? (exit 1 on any FAIL)\n"
      "  gnio caps --nic synthetic:count=10 --gpu auto\n"
      "  gnio diagnose NOT_SUPPORTED      what an error code means and what to check\n"
      "  gnio run packet-processing --rx pcap:data/captures/dns.pcap   the reference application\n"
      "Run 'gnio SUBCOMMAND --help' for each subcommand's options.");

  gnio::cli::add_caps_command(app);
  gnio::cli::add_doctor_command(app);
  gnio::cli::add_diagnose_command(app);
  gnio::cli::add_top_command(app);
  gnio::cli::add_run_command(app);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  return 0;
}
