#pragma once

namespace posenc::bench {

// row/table_row, row/in-call/consecutive, row/in-call/scattered: items are cos/sin pairs.
void register_row_cost();

}  // namespace posenc::bench
