"""Command-line parsing: rules whose findings come from the engine parsers (linter/engines)."""

from __future__ import annotations

from mgpu_lint.findings import Severity

from .registry import Rule, reader_rule

RULES: list[Rule] = [
    reader_rule(
        "MG004", "unknown-flag", Severity.ERROR,
        "a flag the engine does not accept (also removed flags), with a \"did you mean\"",
        """
        The engine stops at start-up on an argument it does not know: vLLM (argparse) prints
        "unrecognized arguments", llama-server "invalid argument", the RPC server its usage.
        Flags are checked against the catalog of the engine release the launch pins (image tag,
        `pip install vllm==…`, `--target-version`), default vLLM 0.30.0 and llama.cpp master
        of 2026-08-22. A flag removed from vLLM names the last release that accepted it and
        what replaces it; a misspelt flag gets the closest known spelling.

        Also reported here: an ambiguous vLLM prefix (`--dp` could match several flags), a
        second positional argument to `vllm serve`, a positional word for llama-server, and
        llama.cpp's `--flag=value`, which it does not support.

        vLLM's demo server, `python -m vllm.entrypoints.api_server`, has a parser of its own:
        the engine arguments and a few options (`--host`, `--port`, `--ssl-*`, `--root-path`,
        `--log-level`), none of the OpenAI-compatible server's (`--api-key`,
        `--chat-template`, `--uvicorn-log-level` …). The module is gone from vLLM 0.25.0 on: a
        launch pinned there exits with "No module named vllm.entrypoints.api_server" (an error
        at the module name); without a pin it is a warning, and the flags are checked against
        vLLM 0.24.0, the last release that has it.

        `--omni` is vLLM-Omni's, not vLLM's: from 0.30.0 vLLM's `vllm` command hands a launch
        holding it to the vllm-omni package before reading any option, and exits when that
        package is missing. On the `vllm/vllm-omni` image (or a script that installs
        vllm-omni) vLLM-Omni's options are accepted; with no image named it is a warning that
        the launch needs vllm-omni; on vLLM's own image, before 0.30.0, or with
        `python -m vllm.entrypoints.openai.api_server` it is an error that says so (no
        did-you-mean).

        Example:

            vllm serve meta-llama/Llama-3.1-70B-Instruct --tensor-paralel-size 4

        Use instead: `--tensor-parallel-size 4`.

        When the launch pins a release without a catalog (MG015), unknown flags are warnings:
        the nearest catalogued release may differ.
        """,
    ),
    reader_rule(
        "MG005", "missing-value", Severity.ERROR,
        "a flag that needs a value has none (or swallows the next flag)",
        """
        vLLM fails with "expected one argument" when a flag that takes a value is last or is
        followed by another flag. llama.cpp is worse: it always takes the next word as the
        value, so `-fa -ngl 99` gives `-ngl` to `-fa` (it fails with "unknown value for
        --flash-attn: '-ngl'") and `99` becomes a stray argument. One finding is reported at
        the flag that lacks its value; the swallowed flag is related.

        Example:

            llama-server -m model.gguf -fa -ngl 99

        Use instead: `-fa on -ngl 99`.
        """,
    ),
    reader_rule(
        "MG006", "invalid-value", Severity.ERROR,
        "a value of the wrong type or outside the engine's choices",
        """
        The engine converts each value when it parses the command line and stops when it
        cannot: an integer that does not parse (`--max-num-seqs abc`), a choice that is not
        offered (`--kv-cache-dtype fp9`, `-ctk Q8_0` — llama.cpp's cache types are lower case),
        JSON that does not parse or names a field the config does not have
        (`--compilation-config '{"level": 3}'`: the field is `mode` now), `-ts` with more than
        15 entries, `--rpc` items that are not host:port, a port out of range for the RPC
        server, a value given to a boolean flag (`--enforce-eager true`: vLLM receives `true`
        as an extra argument).

        vLLM accepts human-readable integers where it says so: `--max-model-len 32k` is 32,000
        and `32K` is 32,768; decimals with binary suffixes (`1.5K`) are rejected.

        `--config FILE.yaml` problems are reported here too: only `.yaml`/`.yml` files, only one
        `--config`, and `key: false` in the file is silently dropped by `vllm serve` (a
        warning: the setting keeps its default). A file vLLM's YAML loader (PyYAML) refuses
        is reported with what is wrong and where in it (`anchor &x is defined twice, at
        cfg.yaml:1:4 and again at cfg.yaml:2:4`, a quote never closed, a tab that indents).

        A size no deployment has is reported too, so the rules that would count or loop over
        it are skipped rather than run for hours: a parallel size, node count or context
        length beyond the limits of linter/bounds.py (`-tp 1000000000`, an error), and a GPU
        request beyond 1,048,576 (`nvidia.com/gpu: 100000000`, a warning: the engine never
        parses it, and no machine has that many GPUs).

        The finding points at the value; rules that need the value stay silent.
        """,
    ),
    reader_rule(
        "MG007", "duplicate-flag", Severity.WARNING,
        "a flag given twice: which value wins",
        """
        vLLM and llama.cpp keep the last value of a repeated flag without an error, so one of
        the two values is silently ignored — often the one the author edited. The finding
        points at the overridden occurrence and names the winner (related).

        Also reported: a llama.cpp `LLAMA_ARG_*` environment variable overridden by the
        command line, and a vLLM JSON option given whole and with dotted keys
        (`-cc '{"mode": 3}' -cc.cudagraph_capture_sizes+ 1,2`): vLLM appends the dotted keys as
        one JSON object after every other argument, so the whole value is replaced, not merged.
        A key given twice in one mapping of a vLLM `--config` file is reported too: the YAML
        loader keeps the last value.

        Options that accumulate (llama.cpp `--lora`, `--rpc`, `--api-key` …, vLLM
        `--middleware`) are not duplicates.
        """,
    ),
    reader_rule(
        "MG008", "deprecated-flag", Severity.WARNING,
        "a flag or form the engine still accepts but deprecates",
        """
        The flag works today and will break on an upgrade: vLLM's `--model` with `vllm serve`
        (write the model as the first argument), llama.cpp's `--mlock`, `--mmap`,
        `--direct-io` (use `--load-mode`), `--defrag-thold` (a no-op), and repeating one
        spelling of an accumulating llama.cpp option (`--lora a --lora b`: write
        `--lora a,b`).
        """,
    ),
    reader_rule(
        "MG009", "unresolved-variable", Severity.INFO,
        "a value the rules need holds a variable that could not be resolved",
        """
        The model, a parallel size, a memory flag or another value that rules compute with
        holds `$(VAR)`, `${VAR}` or `$VAR`, and the file does not say what it expands to (or a
        llama.cpp `LLAMA_ARG_*` variable comes from a secret or configMap). mgpu-lint never
        guesses: the rules named in the message are skipped for this launch. The finding
        points at the variable reference.

        To check the launch, define the variable where the launch can see it (a shell
        assignment, the container's `env`, a compose `.env` file) or write the value.
        """,
    ),
    reader_rule(
        "MG013", "abbreviated-flag", Severity.WARNING,
        "vLLM accepts a prefix of a long flag: the flag it resolves to (error when unintended)",
        """
        vLLM's argument parser accepts any unambiguous prefix of a long option
        (`--gpu-memory 0.9` is `--gpu-memory-utilization 0.9`). It works until a release adds a
        flag with the same prefix: the launch then fails with "ambiguous option". Write the
        full name.

        It is an error when the prefix resolves to a flag the author cannot have meant:
        `--ep` is taken as `--eplb-config` (not `-ep`/`--enable-expert-parallel`), and
        `--device cuda` as `--device-ids` (`--device` was removed after vLLM 0.9.2). The value
        then goes to the wrong option, and rules that need it stay silent.
        """,
    ),
    reader_rule(
        "MG014", "glued-argument", Severity.ERROR,
        "a flag and its value in one exec-form list item (`\"--port 8000\"`)",
        """
        In Kubernetes `args:`, a compose list or a Dockerfile JSON `CMD`, every list item is
        one argument, with no shell to split it. `- "--tensor-parallel-size 4"` reaches the
        engine as a single word, which it rejects (vLLM: "unrecognized arguments").

        Example:

            args: ["--model", "meta-llama/Llama-3.1-8B-Instruct", "--port 8000"]

        Use instead: `["--port", "8000"]` (or `"--port=8000"` for vLLM).
        """,
    ),
    reader_rule(
        "MG015", "version-not-catalogued", Severity.INFO,
        "the pinned engine release has no flag catalog: the nearest catalogued one is used",
        """
        The launch pins a vLLM release (image tag, `pip install vllm==…`, `--target-version`)
        for which mgpu-lint has no flag catalog, or a tag such as `nightly` or a digest that
        names no release. Flags are checked against the nearest catalogued release, named in
        the message; unknown flags are then warnings, not errors, since the pinned release may
        accept them.
        """,
    ),
    reader_rule(
        "MG016", "model-ignored", Severity.ERROR,
        "the model is given where the entry point ignores or rejects it, or not at all",
        """
        `python -m vllm.entrypoints.openai.api_server` takes the model from `--model`. A
        positional model is rejected up to vLLM 0.9.2 ("unrecognized arguments") and silently
        ignored from 0.10: the default model (`Qwen/Qwen3-0.6B` in 0.30.0) is served instead.
        Without any model, `vllm serve` serves that default too — often because an option
        with several values (`--served-model-name a b`, `--api-key k1 k2`) swallowed the
        model written after it.

        vLLM's demo server (`python -m vllm.entrypoints.api_server`) has no positional
        argument in any release: a positional model is "unrecognized arguments".

        Also reported: the program repeated after an image whose entrypoint already runs
        vLLM -- `args: ["serve", "meta-llama/…"]` runs `vllm serve serve …`, and a compose
        `command: vllm serve …` or `python3 -m vllm.entrypoints.openai.api_server …` becomes
        arguments of the image's own `vllm serve` (both exit: "unrecognized arguments") -- and
        the model given both as the positional argument and with `--model`.

        Use instead: `vllm serve MODEL [options]`, or `--model MODEL` with the api_server
        module.
        """,
    ),
]
