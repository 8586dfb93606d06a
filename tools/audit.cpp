// audit: evaluate a checkpoint under a list of attacks, class by class (see attacks/audit.h for the flags).
#include <iostream>

#include "attacks/audit.h"

int main(int argc, char** argv) { return cw::attacks::audit_main(argc, argv, std::cout, std::cerr); }
