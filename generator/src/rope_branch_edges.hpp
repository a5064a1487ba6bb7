#pragma once
// Scaling branch decisions within a few ulp: Llama 3's wavelength thresholds, YaRN's floor/ceil of
// the correction range, and YaRN's degenerate range (high < low after clamping).
#include "file_builder.hpp"

namespace posenc::generator {

// Registers the BranchEdge flag's note.
void describe_branch_edge(FileBuilder& b);
void llama3_branch_edges(FileBuilder& b);
void yarn_branch_edges(FileBuilder& b);
void yarn_degenerate_range(FileBuilder& b);

}  // namespace posenc::generator
