#include "recipes/recipe.hpp"
