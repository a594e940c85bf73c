"""fp8lab.Recipe: a recipe as the text of an fp8lab recipe file, read and checked by recipes/
(the CLI's reader, fields and messages) through fp8lab._C. The ops take that text."""

from typing import Any, Optional

from fp8lab import _C

# accelerate's TERecipeKwargs fields (its utils/dataclasses.py), all of them fp8lab recipe fields
# of the same name and default (recipes/recipe.hpp).
TE_KWARGS = (
    "use_autocast_during_eval",
    "margin",
    "interval",
    "fp8_format",
    "amax_history_len",
    "amax_compute_algo",
    "override_linear_precision",
    "use_mxfp8_block_scaling",
)


def _yaml_value(value: Any) -> str:
    # The YAML scalar or flow list of a keyword value; recipes/ parses and checks it.
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_yaml_value(v) for v in value) + "]"
    return str(value)


class Recipe:
    """One FP8 recipe. ``text`` is what the ops take (``fp8lab.quantize(x, recipe.text, ...)``;
    a Recipe itself is accepted wherever fp8lab's Python functions take a recipe)."""

    def __init__(self, text: str = ""):
        self.text = text
        self._info = _C.recipe_info(text)  # ValueError with recipes/' message

    @classmethod
    def from_file(cls, path: str) -> "Recipe":
        """An fp8lab recipe file (YAML mapping of recipe fields). Accelerate configs are not read
        from Python yet: `fp8lab explain FILE` shows the fp8lab recipe they stand for."""
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except OSError as e:
            raise ValueError(f"{path}: cannot read the recipe file: {e.strerror}") from None
        if _C.is_accelerate_config(text):
            raise NotImplementedError(
                f"{path} looks like an accelerate config; reading those from Python is not built "
                "yet. `fp8lab explain` prints the fp8lab recipe it stands for."
            )
        try:
            return cls(text)
        except ValueError as e:
            # recipes/ names the text "recipe"; name the file instead.
            message = str(e)
            raise ValueError(
                path + message[len("recipe"):] if message.startswith("recipe:") else message
            ) from None

    @classmethod
    def te(cls, **kwargs: Any) -> "Recipe":
        """accelerate's TERecipeKwargs: the fields given, the others at their defaults (delayed
        scaling, HYBRID, margin 0, interval 1, amax_history_len 1024, most_recent; MXFP8 with
        use_mxfp8_block_scaling=True). None means the default, as in accelerate."""
        unknown = sorted(set(kwargs) - set(TE_KWARGS))
        if unknown:
            raise TypeError(
                f"Recipe.te() got unexpected keyword arguments {unknown}; accepted: "
                + ", ".join(TE_KWARGS)
            )
        lines = [f"{k}: {_yaml_value(v)}" for k, v in kwargs.items() if v is not None]
        return cls("\n".join(lines))

    @property
    def scaling(self) -> str:
        return self._info["scaling"]

    def describe(self) -> str:
        """The fields this recipe's scaling uses, one per line (recipes::describe)."""
        return self._info["describe"]

    def plan(self, operand: str, gemm: str, layer: Optional[str] = None) -> dict:
        """The lowering's plan for ``operand`` of ``gemm`` (in the Linear named ``layer``)."""
        return _C.plan(self.text, operand, gemm, layer)

    def __eq__(self, other: object) -> bool:
        # Two recipes are the same run exactly when their canonical strings are (recipe.hpp).
        return isinstance(other, Recipe) and self._info["canonical"] == other._info["canonical"]

    def __hash__(self) -> int:
        return hash(self._info["canonical"])

    def __repr__(self) -> str:
        return f"Recipe({self.text!r})"


def recipe_text(recipe: "Recipe | str") -> str:
    return recipe.text if isinstance(recipe, Recipe) else recipe


__all__ = ["Recipe", "recipe_text"]
