// audit: evaluate a checkpoint under a list of attacks, class by class (see jobs/audit.h for the flags).
#include <iostream>

#include "jobs/audit.h"

int main(int argc, char** argv) { return cw::eval::audit_main(argc, argv, std::cout, std::cerr); }
