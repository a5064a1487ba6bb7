// Included last by each family's unit. A mutant's build (tests/mutation/CMakeLists.txt) puts the
// mutated copy of its file first on the include path and defines POSENC_MUTANT_EXPECTED for the
// units that include that file; the copy ends by defining POSENC_MUTANT_APPLIED. So a unit that
// read the original instead does not compile, and no mutant is judged unmutated.
#if defined(POSENC_MUTANT_EXPECTED) && !defined(POSENC_MUTANT_APPLIED)
#error "posenc mutation: this unit includes the original of the mutated file, not the mutant's copy"
#endif
