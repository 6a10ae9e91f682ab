"""How `vllm serve` and the api_server module take the model, per release (the walker's
positional and --model handling; a mixin of ``vllm._Walker``).  Facts: vllm-versions/README.md
"Entry points"."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from ..findings import Related, Severity
from ..source import Span, Word
from .invocation import ModelRef, OptionValue

if TYPE_CHECKING:
    from ..launch import Launch
    from .catalog import FlagCatalog
    from .invocation import Builder

# Entry-point behaviours by release (first release that behaves the new way):
# api_server module: a positional model is rejected up to 0.9.2 and ignored from 0.10.0
# (vllm-versions/README.md "Entry points").
FIRST_IGNORING_RELEASE = "0.10.0"
# `vllm serve` up to 0.7.3: the positional model is required (nargs=None) and
# ServeSubcommand.cmd raises ValueError when --model differs from its default (vllm/scripts.py
# 0.6.6.post1, vllm/entrypoints/cli/serve.py 0.7.3).  From 0.8 the model is optional and
# FlexibleArgumentParser.parse_args raises ValueError on a `--model` word, up to 0.10.2
# (vllm/utils.py 0.8.5, vllm/utils/__init__.py 0.9.2, 0.10.0, 0.10.2); from 0.11 it warns and
# moves the model to the front (vllm/utils/argparse_utils.py 0.11.2).
FIRST_OPTIONAL_MODEL_RELEASE = "0.8.0"
FIRST_MODEL_REWRITE_RELEASE = "0.11.0"
# the api_server module prints a deprecation warning from 0.29.0 (vllm-versions/README.md)
FIRST_DEPRECATED_API_SERVER = "0.29.0"
MODEL_MESSAGE = ("With `vllm serve`, you should provide the model as a positional argument "
                 "instead of via the `--model` option.")
PARSER_MODEL_MESSAGE = ("With `vllm serve`, you should provide the model as a positional argument "
                        "or in a config file instead of via the `--model` option.")
# the raw-word tests of FlexibleArgumentParser.parse_args (vllm/utils/argparse_utils.py, 0.30.0)
_MODEL_WORD = re.compile(r"^--model(=.+|$)")
_CONFIG_WORD = re.compile(r"^--config(=.+|$)")
_SERVED_WORD = re.compile(r"^--served[-_]model[-_]name(=.+|$)")


class ModelMixin:
    """The walker's model handling (state lives on ``vllm._Walker``)."""

    launch: Launch
    b: Builder
    catalog: FlagCatalog
    words: tuple[Word, ...]
    name: str
    api_server: bool
    module: str
    positional: list[Word]
    model_broken: bool
    entry_repeated: bool
    greedy: tuple[str, Word] | None
    unknown_words: Word | None
    configs: list[tuple[Word, Span]]
    config_data: dict[str, Any] | None

    def before(self, release: str) -> bool:  # defined by the walker
        raise NotImplementedError


    def _positional(self, word: Word) -> None:
        if self.api_server:
            self.positional.append(word)
            return
        if self.unknown_words is not None and (self.positional or self.model_broken):
            return  # the unknown words before it may hold a flag that takes it as a value
        if self.entry_repeated:
            return  # the model after a repeated entrypoint: MG016 says why vLLM exits
        if self.positional or self.model_broken:
            taken = self.positional[0].text if self.positional else "serve"
            self.b.report(
                "MG004", Severity.ERROR,
                f"unexpected argument `{word.text}`: vllm serve takes one positional model "
                f"(`{taken}` is already the model), so vLLM fails with \"unrecognized "
                "arguments\"",
                word.span,
            )
            return
        self.positional.append(word)

    def finish_model(self) -> ModelRef | None:
        flag_model = [o for o in self.b.argv if o.key == "model"]
        config_model = [o for o in self.b.before if o.key == "model"]
        if self.api_server:
            return self._api_server_model(flag_model + config_model)
        if self.model_broken:
            return ModelRef(value=None, span=None, origin="positional", known=False)
        if self._serve_rejects_order():
            return ModelRef(value=None, span=None, origin="positional", known=False)
        if not self.positional and self.unknown_words is None and \
                self._serve_rejects_model(flag_model, config_model):
            occs = flag_model or config_model
            if occs:
                occ = occs[-1]
                return ModelRef(value=occ.value if occ.known else None, span=occ.value_span,
                                origin=occ.spelling, known=occ.known)
            return ModelRef(value=None, span=None, origin="positional", known=False)
        if self.positional:
            word = self.positional[0]
            if flag_model:
                self.b.report(
                    "MG016", Severity.ERROR,
                    f"the model is given twice: `{word.text}` as the positional model and "
                    f"{flag_model[-1].spelling} {flag_model[-1].raw}",
                    flag_model[-1].span,
                    hint="keep only the positional model: `vllm serve MODEL …`",
                    related=(Related(self.b.source, word.span, "positional model"),),
                )
                return ModelRef(value=word.text, span=word.span, origin="positional",
                                known=False)
            return self._word_model(word, "positional")
        occs = flag_model or config_model
        if occs:
            occ = occs[-1]
            return ModelRef(value=occ.value if occ.known else None, span=occ.value_span,
                            origin=occ.spelling if occ.origin == "argv" else "config",
                            known=occ.known)
        if self.configs and not any(o.origin == "config" for o in self.b.before):
            # a --config file that could not be read may name the model
            return ModelRef(value=None, span=None, origin="config", known=False)
        if self.unknown_words is not None:
            # the model may be among the words of an unknown expansion
            word = self.unknown_words
            return ModelRef(value=None, span=word.span, origin="positional", known=False)
        self._no_model()
        return ModelRef(value=self._default_model(), span=None, origin="default", known=False)

    def _serve_rejects_model(self, flag_model: list[OptionValue],
                             config_model: list[OptionValue]) -> bool:
        """MG016 where `vllm serve` without a positional model fails in this release: the model
        is required up to 0.7, and --model is rejected up to 0.10 (True when reported)."""
        version = self.name
        hint = "write the model first: `vllm serve MODEL …`"
        if self.before(FIRST_OPTIONAL_MODEL_RELEASE):
            default = self._default_model()
            given = [o for o in flag_model + config_model if not (o.known and o.value == default)]
            for occ in given:
                self.b.report(
                    "MG016", Severity.ERROR,
                    f"vLLM {version} takes the model only as the positional argument of vllm "
                    f"serve: with {occ.spelling} it fails (ValueError: \"{MODEL_MESSAGE}\")",
                    occ.span, hint=hint,
                )
            if not given:
                self.b.report(
                    "MG016", Severity.ERROR,
                    f"no model given: vllm serve in vLLM {version} requires the model as its "
                    "first argument (\"the following arguments are required: model_tag\")",
                    self.launch.program.span, hint=hint,
                )
            return True
        if not self.before(FIRST_MODEL_REWRITE_RELEASE):
            return False
        words = [w for w in self.words if w.text == "--model"]
        for word in words:
            self.b.report(
                "MG016", Severity.ERROR,
                f"vLLM {version} rejects the --model option with vllm serve (ValueError: "
                f"\"{PARSER_MODEL_MESSAGE}\"); only `--model=M` slips through",
                word.span, hint=hint,
            )
        return bool(words)

    def _serve_rejects_order(self) -> bool:
        """MG016 where `vllm serve` refuses a launch whose first argument is not the model
        (vllm/utils/argparse_utils.py FlexibleArgumentParser.parse_args and
        _pull_args_from_config, vLLM 0.30.0; the --served-model-name check from 0.20.2, the
        --config one from 0.10.2 in the sampled wheels).  Both look at the raw words after
        `serve`, after a `--model M` word has been moved to the front (0.11 on)."""
        words = self.words
        if not words or not words[0].text.startswith("-") or any(
                _MODEL_WORD.match(w.text) for w in words):
            return False
        if any(w.unresolved for w in words[:1]):
            return False
        hint = "write the model first: `vllm serve MODEL …`"
        if not self.before("0.20.2") and not any(_CONFIG_WORD.match(w.text) for w in words):
            served = next((w for w in words if _SERVED_WORD.match(w.text)), None)
            if served is not None:
                later = (f"; vLLM checks only the first argument, so `{self.positional[0].text}` "
                         "later does not count") if self.positional else ""
                if self.greedy is not None and self.greedy[0] == served.text.split("=")[0]:
                    later = (f"; {self.greedy[0]} would also take `{self.greedy[1].text}` as "
                             "one more served name")
                self.b.report(
                    "MG016", Severity.ERROR,
                    f"{served.text.split('=')[0]} without the model as the first argument: vLLM "
                    "refuses to start (ValueError: \"`model` should be provided as the first "
                    "positional argument when using `vllm serve`\", vllm/utils/argparse_utils.py "
                    f"FlexibleArgumentParser.parse_args){later}",
                    Span(served.span.start, served.span.start + len(served.text.split("=")[0])),
                    hint=hint,
                )
                return True
        if self.before("0.10.2") or self.config_data is None or "model" in self.config_data \
                or not any(w.text == "--config" for w in words):
            return False
        config_word = self.configs[0][0]
        later = (f"; `{self.positional[0].text}` after the first argument does not count"
                 if self.positional else "")
        self.b.report(
            "MG016", Severity.ERROR,
            f"--config {config_word.text} has no `model:` and the first argument is not a "
            "model: vLLM refuses to start (ValueError: \"No model specified! Please specify "
            "model either as a positional argument or in a config file.\", "
            f"vllm/utils/argparse_utils.py _pull_args_from_config){later}",
            config_word.span, hint=hint + ", or add `model:` to the config file",
        )
        return True

    def _rejects_positional(self) -> bool:
        """Whether a positional word is "unrecognized arguments" (the module's parser has no
        positional) rather than taken and ignored."""
        return self.before(FIRST_IGNORING_RELEASE)

    def _api_server_model(self, flag_model: list[OptionValue]) -> ModelRef:
        for word in self.positional:
            rejects = self._rejects_positional()
            behaviour = ("rejects it (unrecognized arguments)" if rejects else
                         "ignores it and serves --model (default "
                         f"{self._default_model()})")
            self.b.report(
                "MG016", Severity.ERROR,
                f"positional model `{word.text}` with python -m {self.module}: this entry "
                f"point takes the model from --model and {behaviour}",
                word.span,
                hint=f"write --model {word.text}, or use `vllm serve {word.text}`",
            )
        if flag_model:
            occ = flag_model[-1]
            return ModelRef(value=occ.value if occ.known else None, span=occ.value_span,
                            origin=occ.spelling, known=occ.known)
        if self.unknown_words is not None:
            # words the linter cannot spell out (`$ARGS`, `docker run` arguments) may hold --model
            return ModelRef(value=None, span=self.unknown_words.span, origin="--model",
                            known=False)
        if not self.positional:
            self._no_model()
        return ModelRef(value=self._default_model(), span=None, origin="default", known=False)

    def _no_model(self) -> None:
        hint = ("write the model first: `vllm serve MODEL …`" if not self.api_server
                else "add --model MODEL")
        extra = ""
        if self.greedy is not None:
            extra = (f"; {self.greedy[0]} takes every following word, including "
                     f"`{self.greedy[1].text}`")
            hint = f"put the model right after serve, before {self.greedy[0]}"
        self.b.report(
            "MG016", Severity.ERROR,
            f"no model given: vLLM serves its default model {self._default_model()}{extra}",
            self.launch.program.span, hint=hint,
        )

    def _default_model(self) -> str:
        spec = self.catalog.by_key.get("model")
        return str(spec.default) if spec is not None and spec.default else "its default"

    def _word_model(self, word: Word, origin: str) -> ModelRef:
        refs = word.unresolved
        if refs:
            spec = self.catalog.by_key.get("model")
            if spec is not None:
                self.b.report_unresolved(spec, refs)
            return ModelRef(value=None, span=word.span, origin=origin, known=False)
        return ModelRef(value=word.text, span=word.span, origin=origin)

    # ---------------------------------------------------------------- --config FILE.yaml
