#include "engine.hpp"

template struct posenc::ref::Engine<posenc::ref::BinLadder>;
