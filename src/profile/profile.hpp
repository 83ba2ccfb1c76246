#pragma once
// Fabric profiles (docs/profiles.md): named, readable scenario files without
// `traffic:` under profiles/ in the repository, compiled into the binary. A
// profile holds the link preset, switch model, routing, congestion control,
// PFC/ECN settings and a default topology sized from a node count; every
// `--fabric NAME` (perf, train, compare, tco) names one.
#include <cstdint>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "scenario/scenario.hpp"

namespace lossless::profile {

// Built-in profile names, sorted (ib-hdr, ib-ndr, ...).
std::vector<std::string> Names();

// The text of a built-in profile and the repository path it came from
// ("profiles/ib-ndr.yaml"); false if `name` is not built in.
bool BuiltinText(const std::string& name, std::string* text, std::string* path);

// Resolves `name_or_path`: a built-in name first, else (when it contains '/',
// ends in .yaml, .yml or .json, or is "-", standard input) a profile file. Anything else throws
// InputError at `where` listing the valid names, with the nearest one
// suggested (exit code 2 in the CLI). An unreadable file names the path.
// Sets *path to the file name errors will cite.
std::string ProfileText(const std::string& name_or_path, std::string* path,
                        const Location& where = {"<cli>", 0, "--fabric"});

// Loads and validates a profile as a scenario (scenario::LoadFabricText: every
// field checked, errors as file:line: field). nodes > 0 sizes the default
// topology to that many nodes (topology.nodes; the profile's gpus_per_node GPUs
// each); 0 keeps the profile's own size; below 0 is an InputError at `where`'s
// file with field "--nodes". `sets` ("a.b=v") apply after the node count.
// The topology is not built here (scenario::BuildTopology does that).
scenario::Scenario Load(const std::string& name_or_path, int64_t nodes = 0,
                        const std::vector<std::string>& sets = {},
                        const Location& where = {"<cli>", 0, "--fabric"});

// One line of `lossless profiles`.
struct Summary {
  std::string name;
  std::string file;  // "profiles/ib-ndr.yaml"
  std::string description;
  std::string link_rate;   // "400Gbps"
  std::string lossless;    // "credits", "PFC", "none"
  std::string cc;          // fabric.cc
  std::string routing;     // fabric.routing
  std::string topology;    // "rail-optimized, radix 64, 8 GPUs/node"
  std::string cost_model;  // on-prem | cloud
};
// Summary of a loaded profile.
Summary Summarize(const scenario::Scenario& s, const std::string& file);
// Every built-in profile, loaded at its default size.
std::vector<Summary> List();

}  // namespace lossless::profile
