// tagwire-info: what this Tagwire is and what it would do here, as
// ompi_info and ucx_info answer for theirs.
//
//   tagwire-info              version, build, launcher and transport here,
//                             every setting (default, current, description)
//   tagwire-info --settings   NAME=value, one a line, for scripts
//   tagwire-info --markdown   the settings as README's table (a test checks
//                             README's copy against it)
//   tagwire-info --version
//
// The settings are the layers' own tables (engine, each built transport,
// the cancel layer), and the TAGWIRE_* variables of this environment are
// checked against them as MPI_Init checks them: a variable MPI_Init would
// refuse makes tagwire-info say why and exit 1.
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "bootstrap/bootstrap.h"
#include "cancel/send_cancel_factory.h"
#include "common/build_info.h"
#include "engine/engine_config.h"
#include "engine/transport_list.h"
#include "transport/registry.h"

namespace {

using namespace tagwire;

void usage(FILE* out) {
  std::fprintf(out,
               "usage: tagwire-info [--settings | --version | --help]\n"
               "Print what this Tagwire is and what it would do on this machine: its\n"
               "version and build, the launcher and transport it would use here, and every\n"
               "TAGWIRE_* setting with its default, its value in this environment and what\n"
               "it does. Exits 1 if a TAGWIRE_* variable here is one MPI_Init would refuse.\n\n"
               "  --settings   only the settings, NAME=value a line (the value in effect)\n"
               "  --markdown   the settings as a Markdown table (name, default, description)\n"
               "  --version    the version\n"
               "  -h, --help   this text\n");
}

void print_version() {
  std::printf("tagwire-info (Tagwire) %.*s\n", static_cast<int>(build_info::version().size()),
              build_info::version().data());
}

std::string text(std::string_view s) {
  return std::string(s);
}
std::string or_dash(std::string_view s) {
  return s.empty() ? "-" : std::string(s);
}

// The transport TAGWIRE_TRANSPORT picks for a job on one host, or across hosts.
std::string chosen_transport(const std::string& wanted, bool one_host) {
  auto entry = transport::choose_transport(engine::built_transports(), wanted, one_host);
  if (!entry) return "none: " + entry.status().message();
  return text((*entry)->name);
}

}  // namespace

int main(int argc, char** argv) {
  bool settings_only = false;
  bool markdown = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "-h" || a == "--help") {
      usage(stdout);
      return 0;
    } else if (a == "--version" || a == "-V") {
      print_version();
      return 0;
    } else if (a == "--settings" || a == "-c") {
      settings_only = true;
    } else if (a == "--markdown") {
      markdown = true;
    } else {
      std::fprintf(stderr, "tagwire-info: unknown option %s (see tagwire-info --help)\n", argv[i]);
      return 2;
    }
  }

  const SettingTable cancel_table = cancel::kSendCancelLayer.settings;
  const std::vector<SettingTable> tables = engine::known_settings(cancel_table);
  auto config = engine::Config::from_environment(cancel_table);
  if (!config) {
    std::fprintf(stderr, "tagwire-info: MPI_Init would refuse this environment: %s\n",
                 config.status().message().c_str());
    return 1;
  }
  const Settings& settings = config->settings;

  if (markdown) {
    std::printf("| variable | default | what it does |\n|---|---|---|\n");
    for (SettingTable table : tables) {
      for (const SettingInfo* info : table) {
        std::printf(
            "| `%s` | %s | %s |\n", text(info->name).c_str(),
            info->default_text.empty() ? "-" : ("`" + text(info->default_text) + "`").c_str(),
            text(info->description).c_str());
      }
    }
    return 0;
  }
  if (settings_only) {
    for (SettingTable table : tables) {
      for (const SettingInfo* info : table) {
        std::printf("%s=%s\n", text(info->name).c_str(), text(settings.text(*info)).c_str());
      }
    }
    return 0;
  }

  std::printf("Tagwire %s (MPI 3.1)\n\nBuilt with:\n", text(build_info::version()).c_str());
  for (const build_info::Part& part : build_info::parts()) {
    std::printf("  %-3s %-32s %s\n", part.built ? "yes" : "no", text(part.name).c_str(),
                text(part.how_used).c_str());
  }

  std::printf("\nTransports (TAGWIRE_TRANSPORT):\n");
  for (const transport::TransportEntry* entry : engine::built_transports()) {
    const transport::Capabilities& caps = entry->capabilities;
    const std::size_t eager =
        caps.eager_threshold != 0 ? caps.eager_threshold : engine::Config{}.eager_threshold;
    std::printf("  %-6s %s; eager up to %zu bytes unless TAGWIRE_EAGER_THRESHOLD says%s\n",
                text(entry->name).c_str(), text(entry->description).c_str(), eager,
                caps.one_host_only ? "; one host only" : "");
  }

  std::printf("\nHere:\n");
  std::printf("  launcher:                      %s\n",
              bootstrap::describe(bootstrap::started_by()).c_str());
  std::printf("  transport, ranks on one host: %s\n",
              chosen_transport(config->transport, true).c_str());
  std::printf("  transport, ranks on several:  %s\n",
              chosen_transport(config->transport, false).c_str());
  std::printf("  (a transport that cannot start on this machine fails MPI_Init with the reason)\n");

  std::printf("\nSettings (environment variables; * = set here):\n");
  for (SettingTable table : tables) {
    for (const SettingInfo* info : table) {
      const bool set = settings.is_set(info->name);
      std::printf("  %s%-26s default %-8s now %-8s %s\n", set ? "*" : " ", text(info->name).c_str(),
                  or_dash(info->default_text).c_str(), or_dash(settings.text(*info)).c_str(),
                  text(info->description).c_str());
    }
  }
  std::printf("  UCX's own settings (UCX_*): ucx_info -c\n");
  return 0;
}
