#pragma once
// Every family's parameters and validation: the one definition shared by reference, fast and
// conformance code.
#include "posenc/errors.hpp"
#include "posenc/params/alibi.hpp"
#include "posenc/params/attention.hpp"
#include "posenc/params/choices.hpp"
#include "posenc/params/inputs.hpp"
#include "posenc/params/learned.hpp"
#include "posenc/params/rope.hpp"
#include "posenc/params/sinusoidal.hpp"
