"""fp8lab.Recipe: a recipe as the text of an fp8lab recipe file, read and checked by recipes/
(the CLI's reader, fields and messages) through fp8lab._C. The ops take that text."""

import dataclasses
import os
from typing import Any, Callable, Mapping, Optional, Sequence

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


# accelerate's AORecipeKwargs fields (its utils/dataclasses.py).
AO_KWARGS = ("config", "module_filter_func", "pad_inner_dim", "enable_fsdp_float8_all_gather")
# torchao's Float8LinearRecipeName values: fp8lab recipe scalings of the same names.
AO_RECIPE_NAMES = ("tensorwise", "rowwise", "rowwise_with_gw_hp")
# How `runs_as` names the recipe to run for accelerate settings (recipes/runs_as.hpp): what they
# ask for, or what accelerate + TE / torchao really run.
RUNS_AS = ("asked", "upstream")


def _unknown_kwargs(function: str, kwargs: Mapping[str, Any], accepted: Sequence[str]) -> None:
    unknown = sorted(set(kwargs) - set(accepted))
    if unknown:
        raise TypeError(
            f"{function}() got unexpected keyword arguments {unknown}; accepted: "
            + ", ".join(accepted)
        )


def _ao_recipe_name(config: Any) -> str:
    # The torchao named recipe a Float8LinearConfig is, up to the fields that change no bit of
    # fp8lab's emulation (emulate, the deprecated force_recompute_fp8_weight_in_bwd) or that the
    # recipe carries itself (pad_inner_dim, enable_fsdp_float8_all_gather).
    if isinstance(config, str):
        if config in AO_RECIPE_NAMES:
            return config
        raise ValueError(
            f"Recipe.ao: config '{config}' is not a torchao recipe name; accepted: "
            + ", ".join(AO_RECIPE_NAMES)
            + ", or a torchao.float8.Float8LinearConfig equal to one of them"
        )
    try:
        from torchao.float8 import Float8LinearConfig
    except ImportError:
        raise TypeError(
            f"Recipe.ao: config is a {type(config).__name__} and torchao is not installed; "
            "accepted: None, a torchao recipe name (" + ", ".join(AO_RECIPE_NAMES) + ") or a "
            "torchao.float8.Float8LinearConfig"
        ) from None
    if not isinstance(config, Float8LinearConfig):
        raise TypeError(
            f"Recipe.ao: config is a {type(config).__name__}; accepted: None, a torchao recipe "
            "name (" + ", ".join(AO_RECIPE_NAMES) + ") or a torchao.float8.Float8LinearConfig"
        )
    free = {
        f: getattr(config, f)
        for f in ("pad_inner_dim", "enable_fsdp_float8_all_gather", "emulate",
                  "force_recompute_fp8_weight_in_bwd")
    }
    for name in AO_RECIPE_NAMES:
        try:
            named = dataclasses.replace(Float8LinearConfig.from_recipe_name(name), **free)
        except AssertionError:  # e.g. FSDP float8 all-gather with an axiswise weight
            continue
        if named == config:
            return name
    raise ValueError(
        f"Recipe.ao: config {config} is none of torchao's named recipes; accepted: "
        "Float8LinearConfig.from_recipe_name(NAME) for NAME in " + ", ".join(AO_RECIPE_NAMES)
        + " (pad_inner_dim, enable_fsdp_float8_all_gather and emulate may differ). Other "
        "configs have no fp8lab recipe yet."
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

    def __init__(self, text: str = "",
                 module_filter_func: Optional[Callable[[Any, str], bool]] = None):
        if not isinstance(text, str):
            raise TypeError(
                f"Recipe: text is a {type(text).__name__}; accepted: str, the text of an fp8lab "
                "recipe file"
            )
        if module_filter_func is not None and not callable(module_filter_func):
            raise TypeError(
                f"Recipe: module_filter_func is a {type(module_filter_func).__name__}; accepted: "
                "None or a callable (module, fqn) -> bool"
            )
        self.text = text
        self._info = _C.recipe_info(text)  # ValueError with recipes/' message
        # accelerate's AORecipeKwargs.module_filter_func: convert_model applies it after the
        # recipe's module_filter rules (it is Python, so not part of the recipe's text).
        self.module_filter_func = module_filter_func

    @classmethod
    def from_file(cls, path: str, runs_as: str = "asked") -> "Recipe":
        """An fp8lab recipe file (YAML mapping of recipe fields) or an accelerate config (its
        fp8_config, as `fp8lab run --recipe FILE` reads it). ``runs_as="upstream"`` gives what
        accelerate + TE or torchao really run for it (`fp8lab explain FILE` lists the
        differences) instead of what it asks for."""
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except OSError as e:
            raise ValueError(f"{path}: cannot read the recipe file: {e.strerror}") from None
        if _C.is_accelerate_config(text) or runs_as != "asked":
            # recipes/ names the file in its messages.
            return cls(_C.recipe_text_of_file(text, path, runs_as))
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
        _unknown_kwargs("Recipe.te", kwargs, TE_KWARGS)
        lines = [f"{k}: {_yaml_value(v)}" for k, v in kwargs.items() if v is not None]
        return cls("\n".join(lines))

    @classmethod
    def ao(cls, **kwargs: Any) -> "Recipe":
        """accelerate's AORecipeKwargs: ``config`` (None: torchao's default tensorwise recipe, as
        accelerate builds it; a torchao recipe name or a Float8LinearConfig equal to a named
        recipe), ``module_filter_func`` ((module, fqn) -> bool; given, it replaces accelerate's
        default filter of the first and last Linear and dims % 16, as in accelerate's
        convert_model_to_fp8_ao), ``pad_inner_dim`` and ``enable_fsdp_float8_all_gather`` (default
        True; read only when config is None, as in accelerate). Unlike accelerate, te() and ao()
        never read ACCELERATE_FP8_* variables: from_env() does."""
        _unknown_kwargs("Recipe.ao", kwargs, AO_KWARGS)
        config = kwargs.get("config")
        lines = [f"scaling: {_ao_recipe_name(config) if config is not None else 'tensorwise'}"]
        names = ("pad_inner_dim", "enable_fsdp_float8_all_gather")
        if config is None:  # accelerate: Float8LinearConfig(pad_inner_dim=..., enable_fsdp...=...)
            flags = {k: True if kwargs.get(k) is None else kwargs[k] for k in names}
        elif isinstance(config, str):  # Float8LinearConfig.from_recipe_name's: both False
            flags = {k: False for k in names}
        else:  # accelerate ignores the two kwargs when a config is given
            flags = {k: getattr(config, k) for k in names}
        lines += [f"{k}: {_yaml_value(v)}" for k, v in flags.items()]
        module_filter_func = kwargs.get("module_filter_func")
        if module_filter_func is not None:
            lines.append(
                "module_filter: {skip_first_last_linear: false, require_dims_divisible_by_16: "
                "false, skip_later_siblings_after_indivisible: false}"
            )
        return cls("\n".join(lines), module_filter_func)

    @classmethod
    def from_env(cls, env: Optional[Mapping[str, str]] = None,
                 runs_as: str = "asked") -> "Recipe":
        """The recipe of the ACCELERATE_FP8_* variables of ``env`` (default: os.environ), read by
        the reader of `fp8lab run --env` and `fp8lab explain --env`: ValueError naming every
        accepted variable when none is set, or the variable and its accepted values when one is
        wrong. ``runs_as="upstream"``: what accelerate + TE or torchao really run."""
        if env is not None and not isinstance(env, Mapping):
            raise TypeError(
                f"Recipe.from_env: env is a {type(env).__name__}; accepted: None (os.environ) or a "
                "mapping of str to str"
            )
        env = dict(os.environ if env is None else env)
        return cls(_C.recipe_text_of_environment(env, runs_as))

    def keep_high_precision(
        self,
        layers: Sequence[str] = (),
        fprop: Sequence[str] = (),
        dgrad: Sequence[str] = (),
        wgrad: Sequence[str] = (),
    ) -> "Recipe":
        """This recipe with Linears kept in high precision, as the CLI's keep_high_precision:
        ``layers`` every GEMM of a Linear whose fully qualified name a regular expression
        matches whole (ECMAScript); ``fprop``, ``dgrad``, ``wgrad`` only that GEMM. Patterns add
        to those the recipe has. ValueError for a bad regex, with recipes/' message."""
        text = _C.recipe_keep_high_precision(
            self.text, *(list(v) if isinstance(v, tuple) else v
                         for v in (layers, fprop, dgrad, wgrad))
        )
        return Recipe(text, self.module_filter_func)

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
