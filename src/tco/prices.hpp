#pragma once
// The TCO model's inputs (docs/tco.md): one table of named values, each with
// unit, source, date and confidence grade, from data/prices.yaml (compiled
// in), partially overridden by a user's --prices file.
#include <optional>
#include <string>
#include <vector>

#include "base/error.hpp"

namespace lossless::tco {

struct Price {
  std::string name;  // e.g. "price_switch_ib_ndr"
  double value = 0;
  std::optional<double> low, high;  // spread across sources (sensitivity range)
  std::string unit, source, date;
  char grade = 'D';  // A..D (docs/tco.md#confidence-grades); 'U' once the user overrides it
  Location where;    // where the value was read (the defaults file or the override)
  bool overridden = false;
  double default_value = 0;  // the value before any override
};

class PriceTable {
 public:
  // data/prices.yaml as compiled in. Every entry needs value, unit, source,
  // date and grade; a broken defaults file is an InputError naming its line.
  static PriceTable Defaults();
  // The same format from text (tests; a full replacement of the defaults).
  static PriceTable Parse(const std::string& text, const std::string& file);

  // A partial override: a YAML mapping of known names, each a number or a
  // mapping with at least `value` (source, date, unit, low, high optional).
  // Throws InputError as file:line: name.field: ... for an unknown name
  // (nearest suggested), a missing or non-numeric value, or one out of range.
  void Override(const std::string& text, const std::string& file);
  void OverrideFile(const std::string& path);
  // One value from the command line (e.g. --server-capex), checked the same way.
  void Set(const std::string& name, double value, const Location& where);

  // The entry; throws std::out_of_range for a name not in the table (a programmer error).
  const Price& Get(const std::string& name) const;
  double Value(const std::string& name) const { return Get(name).value; }
  // Replaces a value without marking it overridden (sensitivity runs).
  void Assume(const std::string& name, double value);
  bool Has(const std::string& name) const;

  const std::vector<Price>& entries() const { return entries_; }

 private:
  Price* Find(const std::string& name);
  std::vector<Price> entries_;
};

// InputError unless `value` is valid for `name` (all values >= 0; pue >= 1;
// amortization years > 0; utilization in (0, 1]; fractions below 1).
void CheckValue(const std::string& name, double value, const Location& where);

}  // namespace lossless::tco
