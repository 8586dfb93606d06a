#include "datasets/class_names.h"

namespace cw::data {

const std::vector<std::string>& digit_class_names() {
    static const std::vector<std::string> names{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"};
    return names;
}

const std::vector<std::string>& fashion_mnist_class_names() {
    static const std::vector<std::string> names{"T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
                                                "Sandal",      "Shirt",   "Sneaker",  "Bag",   "Ankle boot"};
    return names;
}

const std::vector<std::string>& cifar10_class_names() {
    static const std::vector<std::string> names{"airplane", "automobile", "bird",  "cat",  "deer",
                                                "dog",      "frog",       "horse", "ship", "truck"};
    return names;
}

const std::vector<std::string>& cifar100_fine_class_names() {
    static const std::vector<std::string> names{
        "apple",       "aquarium_fish", "baby",      "bear",       "beaver",       "bed",        "bee",
        "beetle",      "bicycle",       "bottle",    "bowl",       "boy",          "bridge",     "bus",
        "butterfly",   "camel",         "can",       "castle",     "caterpillar",  "cattle",     "chair",
        "chimpanzee",  "clock",         "cloud",     "cockroach",  "couch",        "crab",       "crocodile",
        "cup",         "dinosaur",      "dolphin",   "elephant",   "flatfish",     "forest",     "fox",
        "girl",        "hamster",       "house",     "kangaroo",   "keyboard",     "lamp",       "lawn_mower",
        "leopard",     "lion",          "lizard",    "lobster",    "man",          "maple_tree", "motorcycle",
        "mountain",    "mouse",         "mushroom",  "oak_tree",   "orange",       "orchid",     "otter",
        "palm_tree",   "pear",          "pickup_truck", "pine_tree", "plain",      "plate",      "poppy",
        "porcupine",   "possum",        "rabbit",    "raccoon",    "ray",          "road",       "rocket",
        "rose",        "sea",           "seal",      "shark",      "shrew",        "skunk",      "skyscraper",
        "snail",       "snake",         "spider",    "squirrel",   "streetcar",    "sunflower",  "sweet_pepper",
        "table",       "tank",          "telephone", "television", "tiger",        "tractor",    "train",
        "trout",       "tulip",         "turtle",    "wardrobe",   "whale",        "willow_tree", "wolf",
        "woman",       "worm"};
    return names;
}

const std::vector<std::string>& cifar100_coarse_class_names() {
    static const std::vector<std::string> names{"aquatic_mammals",
                                                "fish",
                                                "flowers",
                                                "food_containers",
                                                "fruit_and_vegetables",
                                                "household_electrical_devices",
                                                "household_furniture",
                                                "insects",
                                                "large_carnivores",
                                                "large_man-made_outdoor_things",
                                                "large_natural_outdoor_scenes",
                                                "large_omnivores_and_herbivores",
                                                "medium_mammals",
                                                "non-insect_invertebrates",
                                                "people",
                                                "reptiles",
                                                "small_mammals",
                                                "trees",
                                                "vehicles_1",
                                                "vehicles_2"};
    return names;
}

const std::vector<std::string>& gtsrb_class_names() {
    static const std::vector<std::string> names{
        "Speed limit (20km/h)",
        "Speed limit (30km/h)",
        "Speed limit (50km/h)",
        "Speed limit (60km/h)",
        "Speed limit (70km/h)",
        "Speed limit (80km/h)",
        "End of speed limit (80km/h)",
        "Speed limit (100km/h)",
        "Speed limit (120km/h)",
        "No passing",
        "No passing for vehicles over 3.5 metric tons",
        "Right-of-way at the next intersection",
        "Priority road",
        "Yield",
        "Stop",
        "No vehicles",
        "Vehicles over 3.5 metric tons prohibited",
        "No entry",
        "General caution",
        "Dangerous curve to the left",
        "Dangerous curve to the right",
        "Double curve",
        "Bumpy road",
        "Slippery road",
        "Road narrows on the right",
        "Road work",
        "Traffic signals",
        "Pedestrians",
        "Children crossing",
        "Bicycles crossing",
        "Beware of ice/snow",
        "Wild animals crossing",
        "End of all speed and passing limits",
        "Turn right ahead",
        "Turn left ahead",
        "Ahead only",
        "Go straight or right",
        "Go straight or left",
        "Keep right",
        "Keep left",
        "Roundabout mandatory",
        "End of no passing",
        "End of no passing by vehicles over 3.5 metric tons"};
    return names;
}

}  // namespace cw::data
