#pragma once
// Internal to the scenario module: what LoadScenarioText reads a scenario
// with. The Loader collects field values from the file and --set; Fields
// gives them typed (given value, else the preset's, else the registry
// default) and records each one read in Scenario::resolved; one Read*
// function per block of the file fills its part of the Scenario and checks
// it. LoadScenarioText calls the readers in a fixed order: it is the order
// of `validate --show` and decides which error a file with several gets.
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "base/error.hpp"
#include "scenario/params.hpp"
#include "scenario/scenario.hpp"
#include "units/units.hpp"

namespace lossless::scenario {

inline constexpr const char* kSetFile = "<--set>";

// One field's text and where it came from (file line, --set, preset, default).
struct Value {
  std::string text;
  Location where;
  bool given = false;
};

int64_t LineOf(const YAML::Node& n);
// The option nearest to `key` (for "did you mean" hints).
std::string Nearest(const std::string& key, const std::vector<std::string>& options);
std::string JoinOptions(const std::vector<std::string>& v);

// Conversions that throw InputError at v.where; bounds from p (min > max = none).
int64_t ToInt(const Value& v, const ParamInfo& p);
double ToDouble(const Value& v, const ParamInfo& p);
bool ToBool(const Value& v);
std::string ToEnum(const Value& v, const ParamInfo& p);
// An int field of a list entry (traffic, faults.*) from `lo` to `hi`.
int64_t ToInt(const Value& v, const char* field, double lo, double hi);

// Rates and byte sizes need a unit (docs/units.md): a bare number other than
// zero for a kRate or kBytes field ("400" for fabric.link_rate) is an
// InputError at v.where: "expected a rate with a unit such as 400Gbps". Times
// need one already (units::ParseTime); other types pass.
void RequireUnit(const Value& v, ParamType type);

// A path field (topology.file, outputs.json, outputs.series_csv): a relative
// path written in the scenario file is relative to that file's folder, so a
// scenario runs the same from any directory; one from --set or a default is
// relative to the working directory, as any command-line path. "-" and ""
// stay as they are; the result is lexically normal ("scenarios/../x" is "x").
std::string PathInScenario(const Value& v, const std::string& scenario_file);

// Rejects inputs nested deeper than any scenario needs before yaml-cpp sees
// them (its recursive parser would otherwise exhaust the stack).
void CheckNesting(const std::string& text, const std::string& file);

// The fields of a scenario file and of --set, before any is interpreted.
class Loader {
 public:
  explicit Loader(std::string file) : file_(std::move(file)) {}

  // Collects the registry fields under `node` (map path `path`) and keeps the
  // list fields (traffic, faults.pause_inject, faults.cnp_inject) as nodes.
  void Walk(const YAML::Node& node, const std::string& path);
  // One "a.b=value"; list fields take "<list>.<index>.<field>=value".
  void ApplySet(const std::string& set);

  // A list field as given and its --set overrides "<list>.<index>.<field>".
  // Its implicit assignment may throw (YAML::Node allocates); it is assigned
  // only while a scenario loads, where a throw is an InputError path anyway.
  struct ListInput {  // NOLINT(bugprone-exception-escape)
    YAML::Node node;
    int64_t line = 0;  // of its key
    std::vector<std::pair<std::string, std::string>> sets;
  };

  const std::string& file() const { return file_; }
  // A fabric profile (LoadFabricText): `traffic` may be absent.
  bool traffic_optional() const { return traffic_optional_; }
  void set_traffic_optional(bool v) { traffic_optional_ = v; }
  std::map<std::string, Value>& values() { return values_; }
  ListInput& list(const std::string& name) { return lists_[name]; }

 private:
  std::string file_;
  bool traffic_optional_ = false;
  std::map<std::string, Value> values_;
  std::map<std::string, ListInput> lists_;
};

// Typed access to the registry fields of one scenario. Get and the typed
// readers record the value in sc.resolved; Find does not.
class Fields {
 public:
  Fields(Loader& ld, Scenario& sc) : ld_(ld), sc_(sc) {}

  // The given value, else the preset's, else the registry default; the
  // latter two located at "<scenario file> (preset NAME)" / "<scenario file>
  // (default)", line 0.
  Value Find(const std::string& name) const;
  Value Get(const char* name);
  units::Time Time(const char* name);
  units::Rate Rate(const char* name);
  int64_t Bytes(const char* name);
  int64_t Int(const char* name);
  double Number(const char* name);
  bool Bool(const char* name);
  std::string Choice(const char* name);
  bool Given(const std::string& name) const { return ld_.values().count(name) > 0; }
  // InputError at the field's location: expected `what`, got its text.
  [[noreturn]] void Fail(const char* name, const std::string& what) const;

  Loader& loader() { return ld_; }

 private:
  Loader& ld_;
  Scenario& sc_;
};

// Block readers, in the order LoadScenarioText calls them.
void ReadFabric(Fields& f, Scenario& sc);    // fabric.* (read_fabric.cpp, read_flowctl.cpp)
void ReadNicStall(Fields& f, Scenario& sc);  // faults.nic_stall.* (read_faults.cpp)
void ReadDeadlock(Fields& f, Scenario& sc);  // deadlock.* (read_outputs.cpp)
void ReadTopology(Fields& f, Scenario& sc);  // topology.* (read_topology.cpp)
void ReadOutputs(Fields& f, Scenario& sc);   // outputs.*, stop_time (read_outputs.cpp)
// Last: sc.resolved becomes every registry field in registry order (the
// value read, else the given / preset / default one; "(none)" when empty),
// each with its unit (a derived byte count gets "B", a plain length "m"),
// then one "traffic.N" line per entry and one per fault list entry
// ("faults.pause_inject.N", "faults.cnp_inject.N", "faults.link_loss.N";
// reader.cpp).
void CompleteResolved(Fields& f, Scenario& sc);
// "pattern=ring bytes=64KiB start=0s stride=1 ...": every field of the entry
// with defaults filled in (read_traffic.cpp).
std::string TrafficText(const TrafficSpec& t);
void ReadTraffic(Fields& f, Scenario& sc);  // traffic, checked against fabric.* (read_traffic.cpp)
void ReadInjections(Fields& f, Scenario& sc);  // faults.pause_inject, cnp_inject, link_loss
void ReadTransport(Fields& f, Scenario& sc);   // transport.*, fabric.ber (read_transport.cpp)
void ReadNode(Fields& f, Scenario& sc);        // node.* (read_node.cpp)
// tenants.*, virtualization.*, cost.* (read_profile.cpp): fields of fabric profiles
// (virtualization.* also into net.virt).
void ReadProfileFields(Fields& f, Scenario& sc);

// Parts of ReadFabric: link-level flow control (read_flowctl.cpp).
void ReadIbCredits(Fields& f, Scenario& sc);  // fabric.ib.*
void ReadPfc(Fields& f, Scenario& sc);        // fabric.pfc.* (watchdog included)
// fabric.pfc.headroom and its checks, once the topology is known (after
// ReadTopology): a topology file's own links decide the default.
void ResolvePfcHeadroom(Fields& f, Scenario& sc);

}  // namespace lossless::scenario
