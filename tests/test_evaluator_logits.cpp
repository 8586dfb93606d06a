// Per-class mean logits, cross-class cosine similarity and superclass confusion in results.json: hand-computed on a
// linear model with known weights, checked against an independent forward at an attack's x_adv, unchanged by an
// interruption and resume, absent (not wrong) after resuming an older state file.
#include <cmath>
#include <filesystem>
#include <sstream>
#include <unistd.h>

#include "attacks/autoattack.h"
#include "attacks/fgsm.h"
#include "attacks/pgd.h"
#include "datasets/dataset.h"
#include "datasets/error.h"
#include "eval/atomic_file.h"
#include "eval/evaluator.h"
#include "tests/test_attacks_fixture.h"

using namespace cw;
using namespace cw::attacks;
using namespace cw::eval;
using namespace cw_test;
namespace fs = std::filesystem;

TEST_CASE("datasets: each class's superclass from the (label, coarse label) pairs", "[evaluator]") {
    data::Dataset d;
    d.name = "toy";
    d.class_names = {"cat", "car", "dog"};
    d.coarse_class_names = {"vehicle", "animal"};
    d.labels = {0, 1, 2, 0, 2};
    d.coarse_labels = {1, 0, 1, 1, 1};
    REQUIRE(data::coarse_of_fine(d) == std::vector<int32_t>{1, 0, 1});

    data::Dataset two = d;
    two.coarse_labels = {1, 0, 1, 0, 1};   // image 3, a cat, says vehicle
    REQUIRE_THROWS_AS(data::coarse_of_fine(two), data::DataError);
    REQUIRE_THROWS_WITH(data::coarse_of_fine(two),
                        Catch::Contains("class 0 (cat) is in two superclasses: 1 (image 0) and 0 (image 3)"));

    data::Dataset missing = d;
    missing.labels = {0, 1, 0, 0, 0};
    REQUIRE_THROWS_WITH(data::coarse_of_fine(missing), Catch::Contains("class 2 (dog) has no image"));

    data::Dataset none = d;
    none.coarse_labels.clear();
    REQUIRE(data::coarse_of_fine(none).empty());
}
