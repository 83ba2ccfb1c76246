#pragma once
// Internal to the compare report (compare_html.cpp; not API): the charts of
// the page, each one <svg data-chart="..."> appended to `out` from the
// document's series (or rows), every drawn mark with class "mark", a chart
// without data saying "no data". Each throws InputError (through `in`) at a
// series field of the wrong type.
#include <string>

#include "report/compare_doc.hpp"

namespace lossless::report::detail {

// All-reduce busbw against message size (series.busbw), with line rate and
// the checklist's 92 % mark.
void BusbwChart(std::string& out, const Doc& d, const Reader& in);
// Whether the rows hold --full's scaling rows (scaling_busbw_<nodes>).
bool HasScaling(const Doc& d);
// Busbw of the 1 GiB all-reduce against the node count (the scaling rows).
void ScalingChart(std::string& out, const Doc& d, const Reader& in);
// Small-message latency CDF, whole and its tail (series.latency_cdf).
void LatencyChart(std::string& out, const Doc& d, const Reader& in);
// Iteration times per profile: box, whiskers and every iteration (series.iterations).
void IterationsChart(std::string& out, const Doc& d, const Reader& in);
// Queue occupancy and paused intervals of the incast (series.incast_timeline).
void IncastChart(std::string& out, const Doc& d, const Reader& in);
// Fabric cost per GPU per year by item, stacked (series.tco).
void TcoChart(std::string& out, const Doc& d, const Reader& in);
// Whether the series hold a training step (series.train_step).
bool HasTrainStep(const Doc& d);
// The training step as compute, TP all-reduces and exposed DP communication.
void TrainStepChart(std::string& out, const Doc& d, const Reader& in);

}  // namespace lossless::report::detail
