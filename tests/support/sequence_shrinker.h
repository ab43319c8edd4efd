// Shrinking a failing verb sequence to a minimal one (Zeller's delta debugging, ddmin): drop
// chunks of steps, halving the chunks when no chunk can go, until no single step can be dropped
// and the sequence still fails. Each candidate is asked of `fails` (the sequence runner boots a
// fresh guest for it), at most once (candidates are normalized first, and remembered), and only
// when the model knows what to expect of every step (verb_model.h's Modelled). Pure: the
// runner is behind a callback, so the unit tests shrink against predicates.
#pragma once

#include <functional>

#include "support/verb_model.h"

namespace qlaunch::testing::seq {

struct ShrinkResult {
  Sequence minimal;       // still fails; 1-minimal when `complete`
  size_t runs = 0;        // candidates asked of `fails`
  bool complete = false;  // false: stopped by max_runs or by `fails` asking to stop
};

// `fails(candidate)` says whether the candidate fails the same way the original did (true), or
// passes or fails otherwise (false). `should_stop()` (optional) is asked before every run, e.g. a
// time budget. `failing` itself is not re-run.
ShrinkResult Shrink(const Sequence& failing, const std::function<bool(const Sequence&)>& fails,
                    size_t max_runs, const std::function<bool()>& should_stop = {}, const Limits& limits = {});

}  // namespace qlaunch::testing::seq
