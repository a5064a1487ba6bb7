#include "engine_impl.hpp"

template struct posenc::ref::Engine<posenc::ref::MpfrLadder>;
