"""Reading files: rules whose findings come from the readers (MG000-MG003, MG010-MG012, MG017, MG018)."""

from __future__ import annotations

from mgpu_lint.findings import Severity

from .registry import Rule, reader_rule

RULES: list[Rule] = [
    reader_rule(
        "MG000", "internal-error", Severity.ERROR,
        "mgpu-lint failed on this file (a bug: please report it)",
        """
        mgpu-lint hit an unexpected error while linting this file. The rest of the run goes on;
        this finding stands in for everything that could not be checked in the file. Please
        report it with the file (or a reduced copy) attached.
        """,
    ),
    reader_rule(
        "MG001", "unreadable-file", Severity.ERROR,
        "the file is not UTF-8 text, is binary, is over the size limit or cannot be read",
        """
        mgpu-lint reads UTF-8 text (a byte-order mark is allowed). A file with NUL bytes is
        treated as binary. Files over the size limit (10 MiB, configurable with
        `max-file-size`) are not read at all, so a stray dump cannot stall CI.

        A file is read only up to a point when its commands (scripts, `sh -c` scripts, `RUN`
        lines, Dockerfile exec-form arrays, Markdown blocks, compose commands, together; each
        compose `${…}` reference counts as a word) have more than 250,000 words, when it
        holds more than 1,000 launches, (Markdown) 10,000 code blocks or (Dockerfile)
        100,000 lines of instructions, or at a YAML document of more
        than 250,000 nodes (values, keys, lists and mappings; 100,000 where the fast YAML
        reader cannot read the file and the slower one does), or at the document in which
        the file's YAML (all of its documents and YAML blocks) passes 500,000 nodes: a
        warning says where reading stopped, and nothing after it is checked. No real deployment file comes close to any of them; past them a 10 MiB file
        of short words or of thousands of Deployments would take minutes.

        Side files a launch names are read the same way: a `--config` over 1 MiB or of more
        than 10,000 values is not read,
        and the side files one file's launches name (configs, `config.json`, Dockerfiles;
        GGUF headers at a sixteenth) are read up to 1 MiB together, each counted once; a
        warning at the launch says which is not read, and what it would set is unknown.

        Example: a manifest saved as UTF-16 by an editor, or `model.safetensors` named on the
        command line.
        """,
    ),
    reader_rule(
        "MG002", "yaml-syntax", Severity.ERROR,
        "YAML that does not parse (the position of the error)",
        """
        The file (or a YAML block of a Markdown file) is not valid YAML, so nothing in it can be
        checked — and `kubectl apply` or `docker compose up` would refuse it too. A Markdown
        block is reported only when it names an engine: docs elide what does not matter
        (`...`, `{username}/image`), and a block that names none can hold no launch. The finding
        points where the parser stopped. Documents nested deeper than 1,000 levels are refused
        as well (the YAML parser cannot handle them safely).
        """,
    ),
    reader_rule(
        "MG003", "shell-syntax", Severity.ERROR,
        "unbalanced quotes or a broken line continuation in a command line",
        """
        The command line cannot be what its author meant: a quote is never closed, a backslash
        continues the command into an empty line or the end of the text, or a backslash is
        followed by spaces (it then escapes a space instead of the line break, and the next line
        runs as a separate command — every flag on it is silently dropped from the launch).

        Example:

            vllm serve meta-llama/Llama-3.1-70B-Instruct \\␠
              --tensor-parallel-size 4

        Use instead: delete the space after the backslash.

        The launch in that command is not checked further (one root cause, one finding).
        """,
    ),
    reader_rule(
        "MG010", "unknown-model", Severity.INFO,
        "the model's shape is unknown: memory, heads and expert rules are skipped",
        """
        mgpu-lint knows the shapes of widely deployed models (Llama 3.x/4, Qwen 2.5/3, Mistral,
        Mixtral, DeepSeek-V3/R1, gpt-oss, Gemma 3 …), matched by name with or without the
        organisation and with common suffixes (-Instruct, -FP8, -AWQ, GGUF quantization types).
        A local model directory named relative to the manifest is read from its config.json.
        For any other model, the rules that need its shape (MG102-MG104, MG3xx, MG4xx) are
        skipped. Add it in the configuration:

            [models."my-org/my-model"]
            params = 13.0e9
            layers = 40
            hidden = 5120
            heads = 40
            kv_heads = 8
            head_dim = 128
        """,
        reads=("model", "hf_repo"),
    ),
    reader_rule(
        "MG011", "helm-template", Severity.INFO,
        "an unrendered Helm template: pipe `helm template` output instead",
        """
        `{{ … }}` placeholders are not YAML until Helm renders them, so the file is not parsed.
        Render the chart and lint the output:

            helm template my-release ./chart | mgpu-lint - --stdin-filename rendered.yaml
        """,
    ),
    reader_rule(
        "MG012", "unused-suppression", Severity.INFO,
        "a suppression comment that suppressed nothing",
        """
        A `# mgpu-lint: disable=CODES` comment (or `disable-file=`) listed a code that no
        finding on the lines it covers had. Usually the problem was fixed and the comment
        stayed: remove it, or the codes that no longer apply, so that it cannot hide a new
        finding later. Codes that are not selected in this run are not reported.
        """,
    ),
    reader_rule(
        "MG018", "engine-inferred", Severity.INFO,
        "an image mgpu-lint does not know is checked as the engine its name names",
        """
        A container runs an image that is neither a known engine image (`vllm/vllm-openai`,
        `ghcr.io/ggml-org/llama.cpp:server` …) nor in the configuration's `[images]` table, and
        gives it only arguments. When the image's own name names an engine (`vllm`, `llamacpp`,
        `llama.cpp`, `llama-cpp` in its last path component) and the arguments read cleanly as
        that engine's — a model is stated, every flag is the engine's and takes the value given,
        and for llama.cpp `--host` or `--port` says it runs the server — the launch is checked as
        that engine, and this finding says so: its entry point and release are assumed. With
        any other arguments the image is not read as an engine at all.

        Example:

            containers:
              - name: server
                image: registry.corp/llm/vllm-cuda12:2.1
                args: ["--model", "Qwen/Qwen2.5-7B-Instruct", "--tensor-parallel-size", "2"]

        Say what the image runs, and the finding goes away:

            [images]
            "registry.corp/llm/vllm-cuda12" = "vllm serve"
        """,
    ),
    reader_rule(
        "MG017", "no-launch-found", Severity.INFO,
        "a file named on the command line holds no engine launch (nothing was checked)",
        """
        The file was named explicitly and names an engine (`vllm`, `llama-server`,
        `rpc-server`, `sglang`, a llama.cpp image) outside comments — in Markdown, inside a
        fenced block — but mgpu-lint understood no launch in it (or could not tell what kind of
        file it is), so no rule ran; the finding points at the first such name. A name that is
        only the data of a command that starts nothing (`echo "run vllm serve"`, `printf`,
        `grep`/`pgrep`/`pkill vllm`, `logger`, `curl http://vllm:8000/health`, `cd /opt/vllm`,
        a here-document given to `cat`) is no launch and does not count, unless the words are
        piped into a shell, `xargs` or `tee`, or written to a file (`echo "vllm serve m" > run.sh`):
        then the launch is behind a script mgpu-lint does not read. A named file
        that never names an engine (a CI workflow, a values file) stays silent, so pre-commit
        over a repository does not report every such file. Run `mgpu-lint launches FILE` to
        see what was recognised. Files found by walking a directory stay silent.
        """,
    ),
]
